import { MESSAGE_COLUMNS } from '../row-mapper.js';
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
 * stream), rendered as JSON text by PostgreSQL: the fields in the API's order, `streamId` and
 * `streamVersion` only for stream messages, `schemaVersion` only when not 1, `idempotencyKey`,
 * `correlationId`, `causationId` and `traceparent` only when set, `createdAt` in JavaScript's
 * `toISOString()` form (UTC, milliseconds, `Z`).
 * Bodies and metadata are jsonb's own text (the same JSON value; jsonb writes `": "` and
 * `", "` between members). Node then neither parses nor re-serialises a body.
 */
export const RENDERED_MESSAGE_JSON = `'{"id":' || index
  || ',"messageType":' || to_json(message_type)::text
  || ',"userId":' || coalesce(to_json(user_id)::text, 'null')
  || ',"body":' || body::text
  || ',"metadata":' || coalesce(metadata::text, 'null')
  || ',"contentHash":' || to_json(content_hash)::text
  || ',"createdAt":"' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'
  || CASE WHEN stream_id IS NULL THEN '' ELSE ',"streamId":' || to_json(stream_id)::text || ',"streamVersion":' || stream_version END
  || CASE WHEN schema_version = 1 THEN '' ELSE ',"schemaVersion":' || schema_version END
  || CASE WHEN idempotency_key IS NULL THEN '' ELSE ',"idempotencyKey":' || to_json(idempotency_key)::text END
  || CASE WHEN correlation_id IS NULL THEN '' ELSE ',"correlationId":' || to_json(correlation_id)::text END
  || CASE WHEN causation_id IS NULL THEN '' ELSE ',"causationId":' || to_json(causation_id)::text END
  || CASE WHEN trace_parent IS NULL THEN '' ELSE ',"traceparent":' || to_json(trace_parent)::text END
  || '}'`;

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
