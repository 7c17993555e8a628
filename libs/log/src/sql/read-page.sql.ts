import { MESSAGE_FIELDS } from '@ordinal/contract';
import { MESSAGE_READ_COLUMNS } from '../row-mapper.js';
import { MESSAGE_SQL, messageJsonSql, tombstoneJsonSql } from './message-json.sql.js';
import { HIDDEN_REASON } from './hidden-reason.sql.js';
import { TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';
import { PLAIN_STREAM_ID } from '../tenant.js';
import { atPositions } from './at-positions.sql.js';

/** Filter of a log read. Empty or absent lists mean "everything". */
export interface ReadFilter {
  types?: string[];
  /** `skip`: leave tombstones out (docs/lifecycle.md). @default 'include' */
  tombstones?: 'include' | 'skip';
  /**
   * `hot`: a read that reaches an archived segment fails with `index_archived` instead of
   * reading it from the archive store (docs/storage.md). @default 'all'
   */
  tiers?: 'all' | 'hot';
  /**
   * Only this tenant's messages (docs/tenants.md). A reader filtered by tenant runs its reads
   * under the tenant's row-level security as well (`LogReader`). Absent: every tenant's.
   */
  tenant?: string;
}

/**
 * The WHERE clause's tail for the filter's types and tenant, with their values appended to
 * `values` (so their parameter numbers follow the query's own).
 */
export function filterClause(filter: ReadFilter, values: unknown[]): string {
  let clause = '';
  if (filter.types !== undefined && filter.types.length > 0) {
    values.push(filter.types);
    clause += ` AND message_type = ANY($${values.length}::text[])`;
  }
  if (filter.tenant !== undefined) {
    values.push(filter.tenant);
    clause += ` AND tenant = $${values.length}`;
  }
  return clause + skipTombstones(filter);
}

/**
 * The WHERE clause's tail that leaves tombstones out when the filter says so. Written as a
 * `CASE`, not as `(…) IS NULL`: PostgreSQL estimates the `IS NULL` of an expression it cannot
 * know at one row in 200, so a read of some types planned to fetch every row of those types and
 * sort them for one page (50 ms a page of 1,000 over 100,000 messages, 1.5 s with the JIT that
 * estimate also set off, and growing with the log). A `CASE` it estimates at one in two, and a
 * page is read in index order, as without the skip (skip-tombstones-plan.int-spec.ts).
 */
export function skipTombstones(filter: ReadFilter): string {
  return filter.tombstones === 'skip'
    ? ` AND CASE WHEN (${HIDDEN_REASON}) IS NULL THEN true ELSE false END`
    : '';
}

/** Messages with `from <= index <= to`, in index order, at most `limit` of them. */
export function readPage(
  from: number,
  to: number,
  limit: number,
  filter: ReadFilter = {},
): SqlQuery {
  return pageOf(MESSAGE_READ_COLUMNS, from, to, limit, filter);
}

/**
 * The keys of the messages in `[from, to]` (index, type, user, stored stream id, tenant), in
 * index order, at most `limit`, of the filter's types: a keyed read's first step, which maps
 * only the rows its test keeps (`readPageAt`).
 */
export function readKeysPage(
  from: number,
  to: number,
  limit: number,
  filter: ReadFilter = {},
): SqlQuery {
  return pageOf('index, message_type, user_id, stream_id, tenant', from, to, limit, filter);
}

/**
 * The messages at `positions` (a keyed read's rows: they matched its filter already) within
 * `[from, to]`, in index order (read as their range when they are neighbours: `atPositions`).
 */
export function readPageAt(from: number, to: number, positions: number[]): SqlQuery {
  const at = atPositions(positions, from, to) ?? {
    where: 'index >= $2::bigint AND index <= $3::bigint AND index = ANY($1::bigint[])',
    values: [[], from, to],
  };
  return {
    text: `SELECT ${MESSAGE_READ_COLUMNS} FROM ${TABLES.messages} WHERE ${at.where} ORDER BY index`,
    values: at.values,
  };
}

/** `columns` of the messages in `[from, to]`, in index order, at most `limit`, of the filter's types. */
function pageOf(
  columns: string,
  from: number,
  to: number,
  limit: number,
  filter: ReadFilter,
): SqlQuery {
  const values: unknown[] = [from, to, limit];
  const clause = filterClause(filter, values);
  return {
    text: `SELECT ${columns} FROM ${TABLES.messages}
           WHERE index >= $1 AND index <= $2${clause} ORDER BY index LIMIT $3`,
    values,
  };
}

/**
 * The message as the HTTP API shows it (`GET /api/events/:index`, `data.message` of the SSE
 * stream), rendered as JSON text by PostgreSQL: the contract's fields in its order
 * (`MESSAGE_FIELDS`), each as `MESSAGE_SQL` renders it, optional ones only when set; the same
 * JSON as `toOrdinalMessage` gives. Bodies and metadata are jsonb's own text, so Node neither
 * parses nor re-serialises a body. Built once at module load: the rendered reads' SQL text is a
 * constant (named prepared statements depend on it).
 */
export const RENDERED_MESSAGE_JSON = messageJsonSql(MESSAGE_FIELDS, MESSAGE_SQL);

/** The tombstone of a row whose `tombstone` column (the inner read's `HIDDEN_REASON`) is set. */
const RENDERED_TOMBSTONE_JSON = tombstoneJsonSql('tombstone');

/** A rendered row's JSON: its message's, or its tombstone's when it reads back as one. */
const RENDERED_RECORD_JSON = `CASE WHEN tombstone IS NULL THEN ${RENDERED_MESSAGE_JSON}
  ELSE ${RENDERED_TOMBSTONE_JSON} END`;

/**
 * A messages row's JSON as every reader gets it, for a query reading the table by its own name
 * (no inner read giving a `tombstone` column): its message's, or its tombstone's when a delete,
 * a retention rule or a scavenge hides it.
 */
export const RENDERED_ROW_JSON = `CASE WHEN (${HIDDEN_REASON}) IS NULL THEN ${RENDERED_MESSAGE_JSON}
  ELSE ${tombstoneJsonSql(`(${HIDDEN_REASON})`)} END`;

/** Bytes a row takes in the table (jsonb as stored, perhaps compressed): cheap, no detoasting. */
const STORED_SIZE = `pg_column_size(body) + coalesce(pg_column_size(metadata), 0)`;

/**
 * `readPage` with each row rendered as the API's JSON by PostgreSQL (see RENDERED_MESSAGE_JSON),
 * and at most about `maxBytes` of it. The table's own sizes (`pg_column_size`: jsonb as stored,
 * perhaps compressed, no detoasting) pick the rows to render: rows are taken in index order
 * while the stored bytes before them are under `maxBytes` (so the first row always comes,
 * however large), and a page of large messages does not render `limit` of them to keep a few.
 * The reader then cuts exactly on the JSON's length (`cutRenderedPage`): a second running total
 * here, over the rendered text, cost PostgreSQL as much again as the rendering (1.8x a page).
 * `stored_through` is the stored total up to the row: at or over `maxBytes` on the last row, the
 * page may have stopped early (the reader moves only to its last row).
 */
export function readRenderedPage(
  from: number,
  to: number,
  limit: number,
  filter: ReadFilter,
  maxBytes: number,
): SqlQuery {
  const values: unknown[] = [from, to, limit, maxBytes];
  const typeClause = filterClause(filter, values);
  return {
    text: `SELECT index, message_type, user_id, ${PLAIN_STREAM_ID} AS stream_id, tenant, tombstone, personal, ${RENDERED_RECORD_JSON} AS json, stored_through
           FROM (SELECT ${MESSAGE_READ_COLUMNS}, ${STORED_SIZE} AS stored_size,
                        sum(${STORED_SIZE}) OVER (ORDER BY index) AS stored_through
                 FROM ${TABLES.messages}
                 WHERE index >= $1 AND index <= $2${typeClause}
                 ORDER BY index LIMIT $3) stored
           WHERE stored_through - stored_size < $4
           ORDER BY index`,
    values,
  };
}

/**
 * The rows of a rendered page whose JSON before them is under `maxBytes` (the first always),
 * and whether the page may have stopped early (cut here, or by the stored sizes in SQL).
 * Lengths are the strings' (what they hold in memory), not their UTF-8 bytes.
 */
export function cutRenderedPage<R extends { json: string; stored_through?: string | number }>(
  rows: R[],
  maxBytes: number,
): { rows: R[]; cut: boolean } {
  let held = 0;
  for (let i = 0; i < rows.length; i++) {
    if (i > 0 && held >= maxBytes) return { rows: rows.slice(0, i), cut: true };
    held += rows[i].json.length;
  }
  const last = rows[rows.length - 1];
  return { rows, cut: last !== undefined && Number(last.stored_through) >= maxBytes };
}
