import type { SqlQuery } from '@ordinal/pg';
import { TABLES } from '../log.constants.js';
import { arrayLiteral } from './archive-format.js';

/**
 * `FROM messages` in a read's SQL, with its alias if it has one (`FROM messages m`): the one
 * place a read names the table, which `readFrom` points at other rows. Keywords that may
 * follow the table are not aliases.
 */
const FROM_MESSAGES = new RegExp(
  `\\bFROM ${TABLES.messages}\\b(?!_)(?:\\s+(?:AS\\s+)?(?!(?:WHERE|ORDER|LIMIT|JOIN|LEFT|INNER|CROSS|GROUP|ON|UNION|FOR)\\b)([a-z_][a-z0-9_]*)\\b)?`,
  'gi',
);

/**
 * What a read's `FROM messages` reads instead, as SQL with `$?` where its parameters go:
 * `rows` are the values of `$?1`, `$?2`, … in that order.
 */
export interface ReadSource {
  sql: string;
  values: unknown[];
}

/**
 * `query` reading `source` wherever it reads `messages` (every `FROM messages`, aliased as
 * before), the source's parameters numbered after the query's. A read's SQL is written once,
 * against `messages`; the archive's rows and the guards go through here (docs/storage.md).
 */
export function readFrom(query: SqlQuery, source: ReadSource): SqlQuery {
  const base = query.values.length;
  const sql = source.sql.replace(/\$\?(\d+)/g, (_, n: string) => `$${base + Number(n)}`);
  let found = false;
  const text = query.text.replace(FROM_MESSAGES, (_, alias: string | undefined) => {
    found = true;
    return `FROM (${sql}) AS ${alias ?? TABLES.messages}`;
  });
  if (!found) throw new TypeError('The query does not read the messages table');
  return { text, values: [...query.values, ...source.values] };
}

/**
 * The hot segments in `[from, to]`, or SQLSTATE OA001 (`ARCHIVED_RANGE`) if a segment there is
 * archived: a read that believes a range hot cannot read less than it holds when the range
 * was archived since the reader looked (the guard runs once per statement, in its snapshot).
 */
export function hotSource(from: number, to: number): ReadSource {
  return {
    sql: `SELECT * FROM ${TABLES.messages} WHERE ordinal_require_hot($?1::bigint, $?2::bigint)`,
    values: [from, to],
  };
}

/**
 * Archived rows as the messages table: `param` is a `text[]` of rows' text (`m::text`), each
 * cast to a messages row once (the subquery is kept apart by OFFSET 0, so `(x).*` takes the
 * columns of that one value). PostgreSQL parses a text[] and then each row about a third
 * faster than the same literal as `messages[]` (bench:archive).
 */
function archivedRows(param: string, where = ''): string {
  return `SELECT (x).* FROM (SELECT r::${TABLES.messages} AS x FROM unnest(${param}::text[]) AS r${where} OFFSET 0) AS archived_rows`;
}

/**
 * Rows of a chunk of the archived segment from `segment` (their text, `m::text`, as elements
 * of an array literal: `chunkElements`, or `rowElements` of plain texts) as the messages table,
 * or SQLSTATE OA001 if the segment was restored, or its manifest (`checksum`) changed by a
 * scavenge or a redaction, since the reader looked.
 */
export function archivedSource(segment: number, checksum: string, elements: string[]): ReadSource {
  return {
    sql: archivedRows('$?3', ' WHERE ordinal_require_archived($?1::bigint, $?2::text)'),
    values: [segment, checksum, arrayLiteral(elements)],
  };
}

/**
 * A stream's rows: the hot table, guarded (SQLSTATE OA001 unless the archived chunks holding
 * the stream's rows are exactly `chunks`), and the rows of those chunks (`elements`: all of
 * their rows as `chunkElements` gives them; the read's own conditions pick the stream's).
 */
export function streamSource(
  streamParam: string,
  chunks: number[],
  elements: string[],
): ReadSource {
  if (!/^\$\d+$/.test(streamParam)) throw new TypeError(`Bad parameter ${streamParam}`);
  const hot = `SELECT * FROM ${TABLES.messages} WHERE ordinal_require_stream_chunks(${streamParam}, $?1::bigint[])`;
  if (elements.length === 0) return { sql: hot, values: [chunks] };
  return {
    sql: `${hot} UNION ALL ${archivedRows('$?2')}`,
    values: [chunks, arrayLiteral(elements)],
  };
}

/** SQLSTATE of the guards: a read reached archived rows it did not bring. */
export const ARCHIVED_RANGE = 'OA001';

/** Whether `error` is a guard's: the reader's view of the tiers is stale. */
export function isArchivedRange(error: unknown): boolean {
  const e = (error as { driverError?: { code?: string } })?.driverError ?? error;
  return (e as { code?: string })?.code === ARCHIVED_RANGE;
}
