import type { AppendRequest, AppendResult, NewMessage } from '../message.js';
import { contentHash } from '../content-hash.js';
import { InvalidMessageError } from '../errors/index.js';
import { isStorableText } from '../jsonb-text.js';

/** A message with its JSON and hash computed once, when it is queued. */
export interface PreparedMessage {
  /** The message as it reads back from the log: its objects' keys in PostgreSQL's jsonb order. */
  message: NewMessage;
  /** The body's canonical JSON (RFC 8785), what `hash` is taken over. */
  bodyJson: string;
  metadataJson: string | null;
  hash: string;
}

/** An append waiting in the writer's queue. */
export interface PendingAppend {
  request: AppendRequest;
  prepared: PreparedMessage[];
  bytes: number;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/**
 * What every JSON value the log stores (content, metadata, stream data, snapshot state) is
 * held to, on every entry path (REST, batch, stream appends, snapshots, AMQP).
 */
export const JSON_LIMITS = {
  /** Containers nested inside one another, the value itself counting as 1. */
  maxDepth: 100,
} as const;

/** Where a JSON value breaks the rules, and how; `path` is like `content.items.3.name`. */
export interface JsonProblem {
  path: string;
  reason: string;
}

/** `a.b`, `a.3` or `a["odd key"]`: a path a reader can follow back into the document. */
function child(path: string, key: string): string {
  return /^[A-Za-z0-9_$]+$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/**
 * Thrown inside a walk and caught at its top. The path is collected on the way out (each
 * level adds its key), so a walk that finds nothing builds no path strings at all.
 */
class Refused {
  readonly segments: string[] = [];
  constructor(readonly reason: string) {}

  pathFrom(root: string): string {
    let path = root;
    for (let i = this.segments.length - 1; i >= 0; i--) path = path ? child(path, this.segments[i]) : this.segments[i];
    return path;
  }
}

/** Runs `walk` for the member `key`; a refusal inside it learns the key. */
function within<T>(key: string, walk: () => T): T {
  try {
    return walk();
  } catch (error) {
    if (error instanceof Refused) error.segments.push(key);
    throw error;
  }
}

function numberProblem(value: number): string | null {
  if (!Number.isFinite(value)) return 'is a number JavaScript cannot represent (out of range); send it as a string';
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
    return 'is an integer beyond ±(2^53−1), which a JSON number cannot carry exactly; send it as a string';
  }
  return null;
}

const STRING_REASON = 'has a NUL character (\\u0000) or an unpaired surrogate, which PostgreSQL cannot store';

/**
 * Checks a JSON value without copying it: strings and keys PostgreSQL can store, numbers a
 * reader gets back exactly (finite, integers within ±(2^53−1)), depth within
 * `JSON_LIMITS.maxDepth`. The walk stops at the first problem, so depth never overflows the stack.
 */
export function jsonValueProblem(value: unknown, path: string): JsonProblem | null {
  try {
    check(value, 1);
    return null;
  } catch (error) {
    if (error instanceof Refused) return { path: error.pathFrom(path), reason: error.reason };
    throw error;
  }
}

function check(value: unknown, depth: number): void {
  switch (typeof value) {
    case 'string':
      if (!isStorableText(value)) throw new Refused(STRING_REASON);
      return;
    case 'number': {
      const problem = numberProblem(value);
      if (problem) throw new Refused(problem);
      return;
    }
    case 'boolean':
      return;
    case 'object':
      if (value === null) return;
      if (depth > JSON_LIMITS.maxDepth) throw new Refused(`is nested deeper than ${JSON_LIMITS.maxDepth} levels`);
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) within(String(i), () => check(value[i], depth + 1));
        return;
      }
      for (const key of Object.keys(value)) {
        within(key, () => {
          if (!isStorableText(key)) throw new Refused(`(this key) ${STRING_REASON}`);
          check((value as Record<string, unknown>)[key], depth + 1);
        });
      }
      return;
    default:
      throw new Refused(`is not a JSON value (${typeof value})`);
  }
}

/** `digits` and a power of ten for a decimal number's text: `1.50e3` and `1500` both give `15e2`. */
function decimalOf(text: string): string {
  let digits = text[0] === '-' ? text.slice(1) : text;
  let exponent = 0;
  const e = digits.search(/[eE]/);
  if (e >= 0) {
    exponent = Number(digits.slice(e + 1));
    digits = digits.slice(0, e);
  }
  const dot = digits.indexOf('.');
  if (dot >= 0) {
    exponent -= digits.length - dot - 1;
    digits = digits.slice(0, dot) + digits.slice(dot + 1);
  }
  digits = digits.replace(/^0+/, '');
  if (digits === '') return '0';
  const kept = digits.replace(/0+$/, '');
  return `${kept}e${exponent + digits.length - kept.length}`;
}

/** Whether a JSON number's text means exactly the value JavaScript reads from it (shortest form). */
function isExactNumberText(text: string): boolean {
  const value = Number(text);
  return Number.isFinite(value) && decimalOf(text) === decimalOf(String(Math.abs(value)));
}

/**
 * Text in which every number has at most 15 significant digits and no exponent: each such
 * number reads back exactly, so most bodies skip the scan.
 */
const MAYBE_INEXACT = /\d[eE]|\d[\d.]{15}/;

/**
 * The first number in JSON text (already known to parse) whose value JavaScript cannot keep as
 * written — `1.00000000000000000001` (read as 1), `1e-400` (read as 0), `9007199254740993`
 * — with its path from `root`, or null. JSON.parse rounds such numbers silently, so they are
 * found in the text, before parsing loses them.
 */
export function inexactNumberIn(text: string, root: string): JsonProblem | null {
  if (!MAYBE_INEXACT.test(text)) return null;
  const frames: { array: boolean; key: string; index: number; expectKey: boolean }[] = [];
  const pathHere = () => {
    let path = root;
    for (const f of frames) path = f.array ? `${path}${path ? '.' : ''}${f.index}` : path ? child(path, f.key) : f.key;
    return path;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) frames.push({ array: c === 0x5b, key: '', index: 0, expectKey: c === 0x7b });
    else if (c === 0x7d || c === 0x5d) frames.pop();
    else if (c === 0x2c /* , */) {
      const top = frames[frames.length - 1];
      if (top?.array) top.index++;
      else if (top) top.expectKey = true;
    } else if (c === 0x22 /* " */) {
      let end = i + 1;
      while (text.charCodeAt(end) !== 0x22) end += text.charCodeAt(end) === 0x5c ? 2 : 1;
      const top = frames[frames.length - 1];
      if (top && !top.array && top.expectKey) {
        top.key = JSON.parse(text.slice(i, end + 1)) as string;
        top.expectKey = false;
      }
      i = end;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < text.length && /[0-9.eE+-]/.test(text[end])) end++;
      const number = text.slice(i, end);
      if (!isExactNumberText(number)) {
        return { path: pathHere(), reason: `is the number ${number}, which JavaScript cannot keep exactly (it reads as ${Number(number)}); send it as a string` };
      }
      i = end - 1;
    }
  }
  return null;
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * The order PostgreSQL's jsonb keeps object keys in: shorter (in UTF-8 bytes) first, then by
 * bytes. Reads return objects in this order, so the live copy of a message is built in it too.
 */
export function jsonbKeyOrder(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length - y.length || Buffer.compare(x, y);
}

/** `o[key] = value` that keeps `__proto__` an ordinary key (as JSON.parse does). */
function define(o: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  else o[key] = value;
}

/** A checked JSON value as it reads back from jsonb, and its canonical text. */
export interface StorableJson {
  value: unknown;
  canonical: string;
}

/**
 * Checks a value (as `jsonValueProblem`) and returns it as PostgreSQL will give it back
 * (objects' keys in jsonb order, `undefined` members dropped as JSON.stringify drops them) with
 * its canonical JSON text: RFC 8785 (JCS) — object keys sorted by UTF-16 code units, no
 * whitespace, numbers and strings as ECMAScript's JSON.stringify writes them. The content
 * hash is SHA-256 of that text, so a reader can recompute it from what it reads.
 */
export function toStorableJson(value: unknown, path: string): StorableJson | JsonProblem {
  try {
    return build(value, 1);
  } catch (error) {
    if (error instanceof Refused) return { path: error.pathFrom(path), reason: error.reason };
    throw error;
  }
}

function build(value: unknown, depth: number): StorableJson {
  switch (typeof value) {
    case 'string':
      if (!isStorableText(value)) throw new Refused(STRING_REASON);
      return { value, canonical: JSON.stringify(value) };
    case 'number': {
      const problem = numberProblem(value);
      if (problem) throw new Refused(problem);
      return { value: Object.is(value, -0) ? 0 : value, canonical: JSON.stringify(value) };
    }
    case 'boolean':
      return { value, canonical: value ? 'true' : 'false' };
    case 'object': {
      if (value === null) return { value, canonical: 'null' };
      if (depth > JSON_LIMITS.maxDepth) throw new Refused(`is nested deeper than ${JSON_LIMITS.maxDepth} levels`);
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return build((toJSON as () => unknown).call(value), depth);
      if (Array.isArray(value)) {
        const items: unknown[] = new Array(value.length);
        const texts: string[] = new Array(value.length);
        for (let i = 0; i < value.length; i++) {
          const item = value[i] === undefined || typeof value[i] === 'function' ? null : value[i];
          let built: StorableJson;
          try {
            built = build(item, depth + 1);
          } catch (error) {
            if (error instanceof Refused) error.segments.push(String(i));
            throw error;
          }
          items[i] = built.value;
          texts[i] = built.canonical;
        }
        return { value: items, canonical: `[${texts.join(',')}]` };
      }
      const source = value as Record<string, unknown>;
      const members: { key: string; built: StorableJson }[] = [];
      for (const key of Object.keys(source)) {
        const v = source[key];
        if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
        let built: StorableJson;
        try {
          if (!isStorableText(key)) throw new Refused(`(this key) ${STRING_REASON}`);
          built = build(v, depth + 1);
        } catch (error) {
          if (error instanceof Refused) error.segments.push(key);
          throw error;
        }
        members.push({ key, built });
      }
      const copy: Record<string, unknown> = {};
      if (members.length > 1) members.sort((a, b) => jsonbKeyOrder(a.key, b.key));
      for (const m of members) define(copy, m.key, m.built.value);
      // RFC 8785 orders by UTF-16 code units: JavaScript's own string order.
      members.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      let canonical = '{';
      for (let i = 0; i < members.length; i++) canonical += `${i > 0 ? ',' : ''}${JSON.stringify(members[i].key)}:${members[i].built.canonical}`;
      return { value: copy, canonical: `${canonical}}` };
    }
    default:
      throw new Refused(`is not a JSON value (${typeof value})`);
  }
}

/** Why a text field cannot be stored as given, or null. */
function textProblem(name: string, value: unknown, required: boolean): string | null {
  if (value === null || value === undefined) return required ? `${name} is required` : null;
  if (typeof value !== 'string') return `${name} must be a string`;
  if (required && value.length === 0) return `${name} must not be empty`;
  return isStorableText(value) ? null : `${name} has a NUL character or an unpaired surrogate, which PostgreSQL cannot store`;
}

function storable(value: unknown, path: string, messageType: string): StorableJson {
  const result = toStorableJson(value, path);
  if ('reason' in result) throw new InvalidMessageError(`Message '${messageType}': ${result.path} ${result.reason}`);
  return result;
}

/**
 * Checks and serialises a message once; throws InvalidMessageError (naming the field path) for
 * anything the log could not give back exactly as sent.
 */
export function prepareMessage(message: NewMessage): PreparedMessage {
  const typeProblem = textProblem('messageType', message.messageType, true);
  const problem = typeProblem ?? textProblem('userId', message.userId, false) ?? textProblem('idempotencyKey', message.idempotencyKey, false);
  if (problem) throw new InvalidMessageError(typeProblem ? `Message: ${problem}` : `Message '${message.messageType}': ${problem}`);
  if (message.body === undefined) throw new InvalidMessageError(`Message '${message.messageType}': its content must be JSON`);
  const body = storable(message.body, 'content', message.messageType);
  const metadata = message.metadata === undefined || message.metadata === null ? null : storable(message.metadata, 'metadata', message.messageType);
  return {
    message: { ...message, body: body.value, metadata: (metadata?.value ?? null) as Record<string, unknown> | null },
    bodyJson: body.canonical,
    metadataJson: metadata?.canonical ?? null,
    hash: contentHash(body.canonical),
  };
}
