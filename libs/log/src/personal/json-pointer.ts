/** Tokens of the pointers seen (rules name few; a read opens the same ones per message). */
const TOKENS = new Map<string, readonly string[]>();
const TOKENS_KEPT = 1000;

/** The reference tokens of an RFC 6901 JSON pointer (`/a/b~1c` → `['a', 'b/c']`). */
export function pointerTokens(pointer: string): readonly string[] {
  const known = TOKENS.get(pointer);
  if (known !== undefined) return known;
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new TypeError(`JSON pointer '${pointer}' must start with /`);
  const tokens = Object.freeze(
    pointer
      .slice(1)
      .split('/')
      .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~')),
  );
  if (TOKENS.size >= TOKENS_KEPT) TOKENS.clear();
  TOKENS.set(pointer, tokens);
  return tokens;
}

type Container = Record<string, unknown> | unknown[];

const isContainer = (value: unknown): value is Container =>
  typeof value === 'object' && value !== null;

/** The value at `pointer` in `document`, or undefined when there is none. */
export function valueAt(document: unknown, pointer: string): unknown {
  let node: unknown = document;
  for (const token of pointerTokens(pointer)) {
    if (!isContainer(node) || !Object.prototype.hasOwnProperty.call(node, token)) return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return node;
}

/**
 * Replaces the value at `pointer` in `document` (in place; the member keeps its place among its
 * siblings). Returns false when there is no such member: nothing is added.
 */
export function replaceAt(document: unknown, pointer: string, value: unknown): boolean {
  const tokens = pointerTokens(pointer);
  if (tokens.length === 0) return false;
  let parent: unknown = document;
  for (const token of tokens.slice(0, -1)) {
    if (!isContainer(parent) || !Object.prototype.hasOwnProperty.call(parent, token)) return false;
    parent = (parent as Record<string, unknown>)[token];
  }
  const last = tokens[tokens.length - 1];
  if (!isContainer(parent) || !Object.prototype.hasOwnProperty.call(parent, last)) return false;
  (parent as Record<string, unknown>)[last] = value;
  return true;
}

/**
 * `document` with the value at `pointer` replaced, the caller's document untouched: only the
 * objects and arrays on the pointer's path are copied (each member keeps its place). Without
 * such a member, `document` itself.
 */
export function withValueAt(document: unknown, pointer: string, value: unknown): unknown {
  const tokens = pointerTokens(pointer);
  const replace = (node: unknown, depth: number): unknown => {
    if (depth === tokens.length) return value;
    const token = tokens[depth];
    if (!isContainer(node) || !Object.prototype.hasOwnProperty.call(node, token)) return node;
    const child = (node as Record<string, unknown>)[token];
    const replaced = replace(child, depth + 1);
    if (replaced === child && depth + 1 < tokens.length) return node;
    const copy = (Array.isArray(node) ? node.slice() : { ...node }) as Record<string, unknown>;
    copy[token] = replaced;
    return copy;
  };
  return tokens.length === 0 ? document : replace(document, 0);
}
