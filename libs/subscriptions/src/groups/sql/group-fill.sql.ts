import { TABLES, hiddenReason } from '@ordinal/log/internal';
import type { ConsumerGroupDefinition } from '../group-definition.js';
import { GROUP_TABLES } from '../group-tables.js';

const D = GROUP_TABLES.deliveries;
const B = GROUP_TABLES.batches;
const M = TABLES.messages;
/** A message a delete, a retention rule or a scavenge hides is done for a group: never handed out. */
const HIDDEN = hiddenReason('m');
/** A message field a keyPath may start with, and its column. */
const KEY_COLUMNS: Record<string, string> = {
  body: 'body',
  metadata: 'metadata',
  userId: 'user_id',
  streamId: 'stream_id',
  messageType: 'message_type',
  correlationId: 'correlation_id',
};

/**
 * The ordering key as SQL (the same as `orderingKey` in Node): the stream id, or the value at
 * keyPath (`#>>` gives a string as it is and any other value as JSON text); NULL for
 * round_robin. The path's parts go as a parameter, never into the text.
 */
function keySql(definition: ConsumerGroupDefinition): { sql: string; path: string[] | null } {
  if (definition.strategy === 'round_robin') return { sql: 'NULL::text', path: null };
  if (definition.strategy === 'pinned_by_stream') return { sql: 'm.stream_id', path: null };
  const [root, ...path] = definition.keyPath!.split('.');
  const column = KEY_COLUMNS[root];
  if (path.length === 0) return { sql: `m.${column}::text`, path: null };
  return { sql: `m.${column} #>> $6::text[]`, path };
}

/** Up to this many types, a read-on merges a read of each by its index (see `fillQuery`). */
const MERGED_TYPES = 8;

/** The read-on query `ordinal_group_claim` runs (EXECUTE … USING), and the values it binds from the caller. */
export interface FillQuery {
  /**
   * Reads the log on after `$2` up to `$3` (a safe head read before, or no bound for one
   * category, whose positions commit in order) straight into group `$1`'s deliveries: the
   * matching messages' indices and ordering keys, nothing else, at most `$4`; hidden messages are
   * done for the group and never added. The first `$9` it may hand out go in held by member `$7`
   * under epoch `$8` (attempt 1, deadline `$10`; round_robin: as one row of the batches), as the claim would pick them: the lowest
   * indices; for pinned strategies, only a key's first row when no delivery of the key is
   * outstanding (and every row without a key). One row: the indices read, in order (the read
   * covers up to the last one when `$4` were found, else `$3`), and those handed out. `$5`: the
   * source's types or category, `$6`: the keyPath's parts after its root. The rows go in with
   * `below_read_to` false (the claim looks for those above the checkpoint only) and without ON
   * CONFLICT: nothing adds a delivery above `read_to` but this read (late arrivals and replays
   * are at or below it), and the check cost as much as the insert. A group reads hot segments
   * only: a read reaching an archived one fails (SQLSTATE OA001, `ordinal_require_hot`) instead
   * of passing it. `$5` holds each type once; up to MERGED_TYPES of them are read each by its
   * own index in index order and merged (see `fillQuery`).
   */
  text: string;
  source: string[] | null;
  keyPath: string[] | null;
}

/** The read-on query of a group's source, strategy and keyPath (its values are parameters, never text). */
export function fillQuery(definition: ConsumerGroupDefinition): FillQuery {
  const { source } = definition;
  const key = keySql(definition);
  const messages = `(SELECT * FROM ${M} WHERE ordinal_require_hot($2::bigint + 1, $3::bigint)) m`;
  const range = `m.index > $2::bigint AND m.index <= $3::bigint`;
  // `message_type = ANY(...)` left the plan to the statistics: with the hidden-message filter a
  // guess, a plan that read every unread row of the types and sorted them for the first `$4`
  // won on some ANALYZE samples (200 times the rows, 70 ms a read of 500 over 100,000 events,
  // on every read). Up to MERGED_TYPES types, each is read in index order from (message_type,
  // index) and the reads merged, as many rows as the read takes; more types, the log in index
  // order with the types as a filter only (`IS TRUE`: not an index condition), each row once
  // over the reads.
  const types = 'types' in source ? [...new Set(source.types)] : null;
  const where = `${range} AND (${HIDDEN}) IS NULL`;
  const read =
    types && types.length <= MERGED_TYPES
      ? `SELECT r.index, r.key FROM (${types
          .map(
            (_, i) => `(SELECT m.index, ${key.sql} AS key FROM ${messages}
               WHERE m.message_type = ($5::text[])[${i + 1}] AND ${where}
               ORDER BY m.index LIMIT $4::int)`,
          )
          .join(' UNION ALL ')}) r
         ORDER BY r.index LIMIT $4::int`
      : `SELECT m.index, ${key.sql} AS key FROM ${messages}
         WHERE ${types ? '(m.message_type = ANY($5::text[])) IS TRUE AND' : ''}
           ${'category' in source ? 'm.category = ($5::text[])[1] AND' : ''} ${where}
         ORDER BY m.index LIMIT $4::int`;
  // A pinned key waits for its earlier deliveries: only its first row here, and only when none
  // is outstanding (the CTEs see the deliveries as they were before this statement's insert).
  const handed =
    definition.strategy === 'round_robin'
      ? `SELECT r.index FROM read r ORDER BY r.index LIMIT greatest($9::int, 0)`
      : `SELECT r.index FROM (
           SELECT r.index, r.key, row_number() OVER (PARTITION BY r.key ORDER BY r.index) AS nth FROM read r
         ) r
         WHERE r.key IS NULL OR (r.nth = 1 AND NOT EXISTS (
           SELECT 1 FROM ${D} e WHERE e.group_name = $1::text AND e.key = r.key))
         ORDER BY r.index LIMIT greatest($9::int, 0)`;
  // round_robin: what is handed out goes in as one batch (held deliveries in one row, see
  // GroupHandedBatches1765200001000), the rest as ready rows; pinned: a row each (a key's later
  // events wait for its earlier ones' rows).
  const added =
    definition.strategy === 'round_robin'
      ? `added AS (
             INSERT INTO ${D} (group_name, index, key, late, below_read_to)
               SELECT $1::text, read.index, NULL, false, false
               FROM read WHERE NOT EXISTS (SELECT 1 FROM handed WHERE handed.index = read.index)
           ), batched AS (
             INSERT INTO ${B} (group_name, member_id, epoch, first_index, deadline, indices)
               SELECT $1::text, $7::text, $8::bigint, min(handed.index), $10::timestamptz,
                      array_agg(handed.index ORDER BY handed.index)
               FROM handed HAVING count(*) > 0
           )`
      : `added AS (
             INSERT INTO ${D} (group_name, index, key, late, below_read_to, member_id, epoch, attempt, deadline)
               SELECT $1::text, read.index, read.key, false, false,
                      CASE WHEN handed.index IS NOT NULL THEN $7::text END,
                      CASE WHEN handed.index IS NOT NULL THEN $8::bigint END,
                      CASE WHEN handed.index IS NOT NULL THEN 1 ELSE 0 END,
                      CASE WHEN handed.index IS NOT NULL THEN $10::timestamptz END
               FROM read LEFT JOIN handed ON handed.index = read.index
           )`;
  return {
    text: `WITH read AS (
             ${read}
           ), handed AS (
             ${handed}
           ), ${added}
           SELECT coalesce((SELECT array_agg(read.index ORDER BY read.index) FROM read), '{}'::bigint[]),
                  coalesce((SELECT array_agg(handed.index ORDER BY handed.index) FROM handed), '{}'::bigint[])`,
    source: types ?? ('category' in source ? [source.category] : null),
    keyPath: key.path,
  };
}
