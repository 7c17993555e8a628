import type { SqlQuery } from '@ordinal/pg';
import { TABLES } from '../../log.constants.js';
import type { SealedFields } from '../../message.js';
import { pointerTokens } from '../json-pointer.js';

/** A stored row of a ruled type, as a redaction batch reads it. */
export interface RedactRow {
  index: string;
  message_type: string;
  body: unknown;
  personal: SealedFields | null;
  /** The row's tenant (its subject is the tenant's own, `tenantSubjectHash`), else null. */
  tenant?: string | null;
}

/** The head of the log: a run walks up to it. */
export function readMaxIndex(): SqlQuery {
  return {
    text: `SELECT coalesce(max(index), 0)::text AS through FROM ${TABLES.messages}`,
    values: [],
  };
}

/**
 * The rows of the types in `(position, position + size]`, locked for the batch's transaction
 * (a scavenge erasing one of them waits for it, and then finds the rewritten row); not locked
 * for an archived chunk's rows (`lock` false). Rows a scavenge erased hold no body to redact.
 */
export function readRedactBatch(
  position: number,
  size: number,
  types: string[],
  lock = true,
): SqlQuery {
  return {
    text: `SELECT index::text, message_type, body, personal, tenant FROM ${TABLES.messages}
           WHERE index > $1::bigint AND index <= $1::bigint + $2::bigint
             AND message_type = ANY($3::text[]) AND erased IS NULL
           ORDER BY index${lock ? ' FOR UPDATE' : ''}`,
    values: [position, size, types],
  };
}

/**
 * Rewrites rows in place: their body, sealed fields and content hash, nothing else (index,
 * stream, version, type, metadata, ids stay). Returns the rewritten indices.
 */
export function rewriteRows(
  rows: { index: number; body: unknown; personal: SealedFields; contentHash: string }[],
): SqlQuery {
  return {
    text: `UPDATE ${TABLES.messages} m
           SET body = r.body::jsonb, personal = r.personal::jsonb, content_hash = r.content_hash
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS r(index, body, personal, content_hash)
           WHERE m.index = r.index
           RETURNING m.index::text`,
    values: [
      rows.map((r) => r.index),
      rows.map((r) => JSON.stringify(r.body)),
      rows.map((r) => JSON.stringify(r.personal)),
      rows.map((r) => r.contentHash),
    ],
  };
}

/**
 * The verification: every row up to `through` of a ruled type whose body still holds one of
 * the rule's fields that its sealed fields do not name, i.e. a personal value in clear.
 * Worked out in SQL from the rules alone (`body #> path`), apart from the code that rewrote
 * the rows. `total` counts them all; the first `limit` indices are listed.
 */
export function findClearRows(
  rules: { messageType: string; fields: string[] }[],
  through: number,
  limit: number,
): SqlQuery {
  const paths = rules.map((r) => ({
    type: r.messageType,
    paths: r.fields.map((pointer) => ({ pointer, tokens: pointerTokens(pointer) })),
  }));
  return {
    text: `SELECT m.index::text, count(*) OVER () AS total
           FROM ${TABLES.messages} m
           JOIN jsonb_to_recordset($1::jsonb) AS r(type text, paths jsonb) ON m.message_type = r.type
           WHERE m.index <= $2::bigint AND m.erased IS NULL
             AND EXISTS (
               SELECT 1 FROM jsonb_array_elements(r.paths) AS p(path)
               WHERE m.body #> ARRAY(SELECT jsonb_array_elements_text(p.path->'tokens')) IS NOT NULL
                 AND NOT coalesce(m.personal->'fields' ? (p.path->>'pointer'), false))
           ORDER BY m.index
           LIMIT $3`,
    values: [JSON.stringify(paths), through, limit],
  };
}
