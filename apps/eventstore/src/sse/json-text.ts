declare const jsonOf: unique symbol;

/**
 * JSON text whose parse is a `T`: a string branded with the shape it holds, so text rendered
 * elsewhere (by PostgreSQL, or serialised once for many streams) is written as-is and still
 * typed. Made only by `jsonText` or by a cast where the renderer's shape is vouched for.
 */
export type JsonText<T> = string & { readonly [jsonOf]: T };

/** `JSON.stringify(value)`, typed by what it holds. */
export function jsonText<T>(value: T): JsonText<T> {
  return JSON.stringify(value) as JsonText<T>;
}
