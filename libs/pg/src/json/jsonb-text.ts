/** PostgreSQL's jsonb cannot store U+0000; JSON.stringify writes it as this escape. */
const NUL_ESCAPE = '\\u0000';

/**
 * Whether JSON text holds an escaped NUL, which jsonb refuses (not an escaped backslash
 * followed by `u0000`, which is ordinary text). Callers check the JSON they serialise
 * anyway, so bad content becomes a typed error instead of a database error.
 */
export function hasNulEscape(json: string | null | undefined): boolean {
  if (!json) return false;
  for (let at = json.indexOf(NUL_ESCAPE); at >= 0; at = json.indexOf(NUL_ESCAPE, at + 1)) {
    let backslashes = 0;
    while (at - backslashes - 1 >= 0 && json.charCodeAt(at - backslashes - 1) === 92)
      backslashes += 1;
    if (backslashes % 2 === 0) return true;
  }
  return false;
}

/** A NUL, or a surrogate without its pair: text PostgreSQL refuses (or would have to alter). */
// eslint-disable-next-line no-control-regex -- NUL is one of the characters looked for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether a string can go into a `text` column exactly as it is. */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}
