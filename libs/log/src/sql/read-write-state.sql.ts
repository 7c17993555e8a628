import { MESSAGE_COLUMNS } from '../row-mapper.js';
import { TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/**
 * Everything a flush must check under the log lock, in one round trip: the messages
 * already stored under the batch's idempotency keys, and the streams' versions.
 * Runs as its own statement after the lock so its snapshot sees every earlier commit.
 */
export function readWriteState(idempotencyKeys: string[], streamIds: string[]): SqlQuery {
  return {
    text: `SELECT
      (SELECT coalesce(json_agg(row_to_json(m)), '[]'::json) FROM (
         SELECT ${MESSAGE_COLUMNS} FROM ${TABLES.messages}
         WHERE cardinality($1::text[]) > 0 AND idempotency_key = ANY($1::text[])) m) AS repeats,
      (SELECT coalesce(json_object_agg(stream_id, version::text), '{}'::json)
         FROM ${TABLES.streams}
         WHERE cardinality($2::text[]) > 0 AND stream_id = ANY($2::text[])) AS streams`,
    values: [idempotencyKeys, streamIds],
  };
}
