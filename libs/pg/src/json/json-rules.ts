import { isStorableText } from './jsonb-text.js';

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
export function child(path: string, key: string): string {
  return /^[A-Za-z0-9_$]+$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/**
 * Thrown inside a walk and caught at its top. The path is collected on the way out (each
 * level adds its key), so a walk that finds nothing builds no path strings at all.
 */
class Refused extends Error {
  readonly segments: string[] = [];
  constructor(readonly reason: string) {
    super(reason);
  }

  pathFrom(root: string): string {
    let path = root;
    for (let i = this.segments.length - 1; i >= 0; i--)
      path = path ? child(path, this.segments[i]) : this.segments[i];
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

/**
 * A number value (already a double) is stored as JSON.stringify writes it, which reads back as
 * the same double everywhere: every finite one is kept, integers beyond 2^53 − 1 included
 * (`1e20`). Numbers whose text a parser rounded are found in the text (`inexactNumberIn`).
 */
function numberProblem(value: number): string | null {
  if (!Number.isFinite(value))
    return 'is a number JavaScript cannot represent (out of range); send it as a string';
  return null;
}

const STRING_REASON =
  'has a NUL character (\\u0000) or an unpaired surrogate, which PostgreSQL cannot store';

/**
 * Checks a JSON value without copying it: strings and keys PostgreSQL can store, numbers a
 * reader gets back exactly (finite), depth within
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
      if (depth > JSON_LIMITS.maxDepth)
        throw new Refused(`is nested deeper than ${JSON_LIMITS.maxDepth} levels`);
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

// eslint-disable-next-line no-control-regex -- ASCII is 0x00-0x7f, control characters included
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
  if (key === '__proto__')
    Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
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
      if (depth > JSON_LIMITS.maxDepth)
        throw new Refused(`is nested deeper than ${JSON_LIMITS.maxDepth} levels`);
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return build((toJSON as () => unknown).call(value), depth);
      if (Array.isArray(value)) {
        const items = new Array<unknown>(value.length);
        const texts = new Array<string>(value.length);
        for (let i = 0; i < value.length; i++) {
          const item: unknown =
            value[i] === undefined || typeof value[i] === 'function' ? null : value[i];
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
      for (let i = 0; i < members.length; i++)
        canonical += `${i > 0 ? ',' : ''}${JSON.stringify(members[i].key)}:${members[i].built.canonical}`;
      return { value: copy, canonical: `${canonical}}` };
    }
    default:
      throw new Refused(`is not a JSON value (${typeof value})`);
  }
}

/**
 * Checks a value as `toStorableJson` does and returns only its canonical text (RFC 8785),
 * without building the jsonb-ordered copy: for bulk import, which stores the text and never
 * hands the value to a live reader. The same rules and the same text, about twice as fast.
 */
export function toCanonicalJson(value: unknown, path: string): string | JsonProblem {
  try {
    return canonicalOf(value, 1);
  } catch (error) {
    if (error instanceof Refused) return { path: error.pathFrom(path), reason: error.reason };
    throw error;
  }
}

function canonicalOf(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      if (!isStorableText(value)) throw new Refused(STRING_REASON);
      return JSON.stringify(value);
    case 'number': {
      const problem = numberProblem(value);
      if (problem) throw new Refused(problem);
      return JSON.stringify(value);
    }
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (depth > JSON_LIMITS.maxDepth)
        throw new Refused(`is nested deeper than ${JSON_LIMITS.maxDepth} levels`);
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function')
        return canonicalOf((toJSON as () => unknown).call(value), depth);
      if (Array.isArray(value)) {
        let text = '[';
        for (let i = 0; i < value.length; i++) {
          const item: unknown =
            value[i] === undefined || typeof value[i] === 'function' ? null : value[i];
          try {
            text += (i > 0 ? ',' : '') + canonicalOf(item, depth + 1);
          } catch (error) {
            if (error instanceof Refused) error.segments.push(String(i));
            throw error;
          }
        }
        return `${text}]`;
      }
      const source = value as Record<string, unknown>;
      // RFC 8785 orders by UTF-16 code units: the default sort of strings.
      const keys = Object.keys(source).sort();
      let text = '{';
      let first = true;
      for (const key of keys) {
        const v = source[key];
        if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
        try {
          if (!isStorableText(key)) throw new Refused(`(this key) ${STRING_REASON}`);
          text += `${first ? '' : ','}${JSON.stringify(key)}:${canonicalOf(v, depth + 1)}`;
        } catch (error) {
          if (error instanceof Refused) error.segments.push(key);
          throw error;
        }
        first = false;
      }
      return `${text}}`;
    }
    default:
      throw new Refused(`is not a JSON value (${typeof value})`);
  }
}
