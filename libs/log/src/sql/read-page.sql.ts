import { MESSAGE_FIELDS } from '@ordinal/contract';
import { MESSAGE_COLUMNS } from '../row-mapper.js';
import { MESSAGE_SQL, messageJsonSql } from './message-json.sql.js';
import { TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/** Filter of a log read. Empty or absent lists mean "everything". */
export interface ReadFilter {
  types?: string[];
}

/** Messages with `from <= index <= to`, in index order, at most `limit` of them. */
export function readPage(
  from: number,
  to: number,
  limit: number,
  filter: ReadFilter = {},
): SqlQuery {
  return pageOf(MESSAGE_COLUMNS, from, to, limit, filter);
}

/** `columns` of the messages in `[from, to]`, in index order, at most `limit`, of the filter's types. */
function pageOf(
  columns: string,
  from: number,
  to: number,
  limit: number,
  filter: ReadFilter,
): SqlQuery {
  const types = filter.types ?? [];
  if (types.length === 0) {
    return {
      text: `SELECT ${columns} FROM ${TABLES.messages}
             WHERE index >= $1 AND index <= $2 ORDER BY index LIMIT $3`,
      values: [from, to, limit],
    };
  }
  return {
    text: `SELECT ${columns} FROM ${TABLES.messages}
           WHERE index >= $1 AND index <= $2 AND message_type = ANY($4::text[])
           ORDER BY index LIMIT $3`,
    values: [from, to, limit, types],
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

/** The columns of a rendered read: what filters need, and the message as JSON text. */
export const RENDERED_COLUMNS = `index, message_type, user_id, ${RENDERED_MESSAGE_JSON} AS json`;

/** `readPage` with each row rendered as the API's JSON by PostgreSQL (see RENDERED_MESSAGE_JSON). */
export function readRenderedPage(
  from: number,
  to: number,
  limit: number,
  filter: ReadFilter = {},
): SqlQuery {
  return pageOf(RENDERED_COLUMNS, from, to, limit, filter);
}
