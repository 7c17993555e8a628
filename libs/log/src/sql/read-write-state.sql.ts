import { MESSAGE_COLUMNS } from '../row-mapper.js';
import { TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/**
 * Everything a flush must check under the log lock, in one round trip: the messages
 * already stored under the batch's idempotency keys (found through `message_keys`; the
 * indices of those in archived segments, whose rows the table no longer holds), and the streams' versions and states
 * (`[version, state, deletedThrough, truncateBefore, maxCount]` by stream id, the last two the
 * stream's own retention, else its category's, else null: what can hide a message as it is
 * appended). Runs as its own statement after the lock so its snapshot sees every earlier commit.
 *
 * With `tenants` (a batch of tenants' messages), also which of them are deleted
 * (`deleted_tenants`, docs/tenants.md#deleting-a-tenant); a batch of no tenant reads the same
 * statement as before tenants existed.
 */
export function readWriteState(
  idempotencyKeys: string[],
  streamIds: string[],
  tenants: string[] = [],
): SqlQuery {
  const base = readWriteStateBase(idempotencyKeys, streamIds);
  if (tenants.length === 0) return base;
  return {
    text: `${base.text},
      (SELECT coalesce(json_agg(d.tenant), '[]'::json) FROM ${TABLES.deletedTenants} d
         WHERE d.tenant = ANY($3::text[])) AS deleted_tenants`,
    values: [...base.values, tenants],
  };
}

function readWriteStateBase(idempotencyKeys: string[], streamIds: string[]): SqlQuery {
  return {
    // The batch's keys are looked up once: a new key (the common case) costs one probe.
    text: `WITH keyed AS (
      SELECT k.index FROM ${TABLES.messageKeys} k
      WHERE cardinality($1::text[]) > 0 AND k.idempotency_key = ANY($1::text[])
    )
    SELECT
      (SELECT coalesce(json_agg(row_to_json(m)), '[]'::json) FROM (
         SELECT ${MESSAGE_COLUMNS} FROM ${TABLES.messages}
         WHERE index = ANY(ARRAY(SELECT index FROM keyed))) m) AS repeats,
      (SELECT coalesce(json_agg(keyed.index::text), '[]'::json) FROM keyed
         WHERE NOT EXISTS (SELECT 1 FROM ${TABLES.messages} m WHERE m.index = keyed.index)) AS archived_repeats,
      (SELECT coalesce(json_object_agg(s.stream_id, json_build_array(coalesce(h.version, 0)::text,
                coalesce(st.state, 'live'), coalesce(st.deleted_through, 0)::text,
                coalesce(st.truncate_before, cr.truncate_before)::text, coalesce(st.max_count, cr.max_count)::text)), '{}'::json)
         FROM unnest($2::text[]) AS s(stream_id)
         LEFT JOIN ${TABLES.streams} h ON h.stream_id = s.stream_id
         LEFT JOIN ${TABLES.streamStates} st ON st.stream_id = s.stream_id
         LEFT JOIN ${TABLES.categoryRules} cr ON cr.category = split_part(s.stream_id, '-', 1)
         WHERE h.stream_id IS NOT NULL OR st.stream_id IS NOT NULL OR cr.category IS NOT NULL) AS streams`,
    values: [idempotencyKeys, streamIds],
  };
}
