import { pointerTokens } from './json-pointer.js';

/**
 * Edits of JSON text without parsing it whole: a reader with the `personal` scope gets each
 * message's sealed fields opened into the JSON PostgreSQL rendered (docs/personal-data.md), so
 * only the pointers' paths are walked and the rest of the text is copied as it is (a parse and
 * a stringify of the whole message cost as much as the AES-GCM open itself). The input is JSON
 * the server made (jsonb's text, `JSON.stringify`'s): the scanner finds values, it does not
 * validate; text it cannot walk makes it throw or answer null, and callers fall back to a parse.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

function malformed(at: number): never {
  throw new SyntaxError(`Not JSON the server rendered (at ${at})`);
}

/** The index after the string whose opening quote is at `i`. */
function skipString(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) malformed(i);
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The index after the JSON value that starts at `i` (no space before it). */
export function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return skipString(text, i);
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text.charCodeAt(j);
      if (d === QUOTE) j = skipString(text, j) - 1;
      else if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth++;
      else if ((d === CLOSE_OBJECT || d === CLOSE_ARRAY) && --depth === 0) return j + 1;
    }
    malformed(i);
  }
  // A number, true, false or null: up to the next separator.
  let j = i;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === COMMA || d === CLOSE_OBJECT || d === CLOSE_ARRAY || isSpace(d)) break;
    j++;
  }
  if (j === i) malformed(i);
  return j;
}

/** Whether the key whose quotes are at `start` and `end - 1` is `name`. */
function keyIs(text: string, start: number, end: number, name: string): boolean {
  if (end - start - 2 === name.length && text.startsWith(name, start + 1)) return true;
  // A key written with escapes (rare): compare what it means.
  for (let i = start + 1; i < end - 1; i++)
    if (text.charCodeAt(i) === BACKSLASH) return JSON.parse(text.slice(start, end)) === name;
  return false;
}

/**
 * Walks the members of the object whose `{` is at `i`: `visit(keyStart, keyEnd, valueStart,
 * valueEnd)` for each, in order, until it answers true (then returns that value's start) or
 * the object ends (returns -1).
 */
function walkMembers(
  text: string,
  i: number,
  visit: (keyStart: number, keyEnd: number, valueStart: number, valueEnd: number) => boolean,
): number {
  let j = skipSpace(text, i + 1);
  if (text.charCodeAt(j) === CLOSE_OBJECT) return -1;
  for (;;) {
    if (text.charCodeAt(j) !== QUOTE) malformed(j);
    const keyEnd = skipString(text, j);
    let k = skipSpace(text, keyEnd);
    if (text.charCodeAt(k) !== COLON) malformed(k);
    k = skipSpace(text, k + 1);
    const valueEnd = skipValue(text, k);
    if (visit(j, keyEnd, k, valueEnd)) return k;
    j = skipSpace(text, valueEnd);
    const c = text.charCodeAt(j);
    if (c === CLOSE_OBJECT) return -1;
    if (c !== COMMA) malformed(j);
    j = skipSpace(text, j + 1);
  }
}

/** The start of the value of member `name` of the object whose `{` is at `i`, or -1. */
function memberValue(text: string, i: number, name: string): number {
  let j = skipSpace(text, i + 1);
  if (text.charCodeAt(j) === CLOSE_OBJECT) return -1;
  for (;;) {
    if (text.charCodeAt(j) !== QUOTE) malformed(j);
    const keyEnd = skipString(text, j);
    let k = skipSpace(text, keyEnd);
    if (text.charCodeAt(k) !== COLON) malformed(k);
    k = skipSpace(text, k + 1);
    if (keyIs(text, j, keyEnd, name)) return k;
    j = skipSpace(text, skipValue(text, k));
    const c = text.charCodeAt(j);
    if (c === CLOSE_OBJECT) return -1;
    if (c !== COMMA) malformed(j);
    j = skipSpace(text, j + 1);
  }
}

/** The ranges of the elements of the array whose `[` is at `i`. */
function elementRanges(text: string, i: number): [number, number][] {
  const ranges: [number, number][] = [];
  let j = skipSpace(text, i + 1);
  if (text.charCodeAt(j) === CLOSE_ARRAY) return ranges;
  for (;;) {
    const end = skipValue(text, j);
    ranges.push([j, end]);
    j = skipSpace(text, end);
    const c = text.charCodeAt(j);
    if (c === CLOSE_ARRAY) return ranges;
    if (c !== COMMA) malformed(j);
    j = skipSpace(text, j + 1);
  }
}

const INDEX = /^(0|[1-9][0-9]*)$/;

/**
 * The range of the value at `pointer` (RFC 6901) inside the value that starts at `i`, or null
 * when there is no such member or element (as `replaceAt` finds nothing to replace).
 */
export function locate(text: string, i: number, pointer: string): [number, number] | null {
  const at = locateStart(text, i, pointer);
  return at < 0 ? null : [at, skipValue(text, at)];
}

/** Where the value at `pointer` starts inside the value that starts at `i`, or -1. */
function locateStart(text: string, i: number, pointer: string): number {
  const tokens = pointerTokens(pointer);
  if (tokens.length === 0) return -1;
  let at = i;
  for (let t = 0; t < tokens.length; t++) {
    const token = tokens[t];
    const c = text.charCodeAt(at);
    if (c === OPEN_OBJECT) {
      at = memberValue(text, at, token);
      if (at < 0) return -1;
    } else if (c === OPEN_ARRAY) {
      if (!INDEX.test(token)) return -1;
      const element = elementRanges(text, at)[Number(token)];
      if (element === undefined) return -1;
      at = element[0];
    } else return -1;
  }
  return at;
}

/** Where a message's JSON holds its body, its `redacted` member, and whether it is a tombstone. */
export interface MessageTextParts {
  /** Where the body's value starts. */
  body: number | null;
  /** From the comma before `"redacted"` to the end of its value: what dropping it removes. */
  redacted: [number, number] | null;
  tombstone: boolean;
}

const REDACTED_MEMBER = ',"redacted":';

/** The parts of a message's (or a tombstone's) JSON object text that opening it touches. */
export function messageTextParts(json: string): MessageTextParts {
  const parts: MessageTextParts = { body: null, redacted: null, tombstone: false };
  const start = skipSpace(json, 0);
  if (json.charCodeAt(start) !== OPEN_OBJECT) malformed(start);
  // Up to the body: the members before it (id, type, user) are short; a tombstone has none.
  const body = memberValue(json, start, 'body');
  if (body < 0) {
    parts.tombstone = memberValue(json, start, 'tombstone') >= 0;
    return parts;
  }
  parts.body = body;
  // `redacted` is the last member (MESSAGE_FIELDS' order), so it is looked for from the end,
  // not by walking the members between (a parse's worth of scanning). A match outside strings
  // whose value is followed by the object's last `}` is a member of the message itself: one
  // inside a nested value would be followed by that value's own closing brackets first.
  const at = json.lastIndexOf(REDACTED_MEMBER);
  if (at > body) {
    const valueEnd = skipValue(json, skipSpace(json, at + REDACTED_MEMBER.length));
    const close = skipSpace(json, valueEnd);
    if (json.charCodeAt(close) === CLOSE_OBJECT && skipSpace(json, close + 1) === json.length) {
      parts.redacted = [at, valueEnd];
      return parts;
    }
  }
  // Anywhere else, or written otherwise: walk the members after the body.
  let previousEnd = -1;
  walkMembers(json, start, (keyStart, keyEnd, valueStart, valueEnd) => {
    if (valueStart > body && keyIs(json, keyStart, keyEnd, 'redacted'))
      parts.redacted = [previousEnd, valueEnd];
    previousEnd = valueEnd;
    return parts.redacted !== null;
  });
  return parts;
}

/*
 * The edits of one `spliceClear`, in place of an array of tuples per message: the function runs
 * to its end without calling out, so one set serves every call. [start, end) of the message's
 * text is replaced by [valueStart, valueEnd) of the clear text.
 */
const editStarts: number[] = [];
const editEnds: number[] = [];
const valueStarts: number[] = [];
const valueEnds: number[] = [];

/**
 * A message's JSON text with the value at each of `pointers` in its body replaced by the
 * matching element of `clear`, the JSON text of an array as a box holds it
 * (`["a@b.example",{"city":"Lyon"}]`), and its `redacted` member dropped: what parsing it,
 * `replaceAt` of each value and stringifying it back gives, the rest of the text untouched.
 * `parts` are `messageTextParts(json)`. The array is walked in step with the pointers and the
 * new text is built from slices of the two texts, with nothing else made per message (no array
 * of the values, no list of edits: a reader with the `personal` scope runs this once per
 * message of a catch-up). Null when the text has no body or is a tombstone's, or when the
 * array does not hold one value per pointer (the caller then parses).
 */
export function spliceClear(
  json: string,
  parts: MessageTextParts,
  pointers: readonly string[],
  clear: string,
): string | null {
  if (parts.body === null || parts.tombstone) return null;
  let c = skipSpace(clear, 0);
  if (clear.charCodeAt(c) !== OPEN_ARRAY) malformed(c);
  c = skipSpace(clear, c + 1);
  let count = 0;
  for (let i = 0; i < pointers.length; i++) {
    if (clear.charCodeAt(c) === CLOSE_ARRAY) return null;
    const valueEnd = skipValue(clear, c);
    const at = locateStart(json, parts.body, pointers[i]);
    if (at >= 0) {
      // Kept in order of where they sit in the message (an insertion: a rule names few fields).
      const end = skipValue(json, at);
      let k = count++;
      for (; k > 0 && editStarts[k - 1] > at; k--) {
        editStarts[k] = editStarts[k - 1];
        editEnds[k] = editEnds[k - 1];
        valueStarts[k] = valueStarts[k - 1];
        valueEnds[k] = valueEnds[k - 1];
      }
      editStarts[k] = at;
      editEnds[k] = end;
      valueStarts[k] = c;
      valueEnds[k] = valueEnd;
    }
    c = skipSpace(clear, valueEnd);
    if (clear.charCodeAt(c) === COMMA) c = skipSpace(clear, c + 1);
    else if (clear.charCodeAt(c) !== CLOSE_ARRAY) malformed(c);
  }
  if (clear.charCodeAt(c) !== CLOSE_ARRAY) return null;
  let out = '';
  let from = 0;
  for (let k = 0; k < count; k++) {
    // A rule's fields never nest (resolvePersonalDataRule refuses it): overlapping edits mean
    // text this scanner misread.
    if (editStarts[k] < from) return null;
    out += json.slice(from, editStarts[k]) + clear.slice(valueStarts[k], valueEnds[k]);
    from = editEnds[k];
  }
  // `redacted` is the last member, after the body and so after every edit in it.
  if (parts.redacted !== null) {
    if (parts.redacted[0] < from) return null;
    out += json.slice(from, parts.redacted[0]);
    from = parts.redacted[1];
  }
  return out + json.slice(from);
}
