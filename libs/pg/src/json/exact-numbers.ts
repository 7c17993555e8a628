import { child, type JsonProblem } from './json-rules.js';

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
 * found in the text, before parsing loses them. The rule: a number is kept when its decimal
 * value is that of the double it reads as, written shortest (so `1e20`, `6.02e23` and
 * `1.5e300` are kept: PostgreSQL stores that decimal, and every reader parses it back to the
 * same double).
 */
export function inexactNumberIn(text: string, root: string): JsonProblem | null {
  if (!MAYBE_INEXACT.test(text)) return null;
  const frames: { array: boolean; key: string; index: number; expectKey: boolean }[] = [];
  const pathHere = () => {
    let path = root;
    for (const f of frames)
      path = f.array ? `${path}${path ? '.' : ''}${f.index}` : path ? child(path, f.key) : f.key;
    return path;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */)
      frames.push({ array: c === 0x5b, key: '', index: 0, expectKey: c === 0x7b });
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
        return {
          path: pathHere(),
          reason: `is the number ${number}, which JavaScript cannot keep exactly (it reads as ${Number(number)}); send it as a string`,
        };
      }
      i = end - 1;
    }
  }
  return null;
}
