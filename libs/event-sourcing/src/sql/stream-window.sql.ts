import { TABLES } from '@ordinal/log/internal';

/**
 * CTEs that say which versions of stream `$1` (category `$cat`) a read may see, for the stream
 * reads and aggregate loads (docs/lifecycle.md): `head` (its version), `rules` (its state, the
 * versions deleted, and the retention settings: the stream's own, else its category's), and
 * `visible.first` (the first visible version). Every rule hides a prefix of the stream:
 * versions up to `deleted_through`, below `truncate_before`, beyond the newest `max_count`,
 * and older than `max_age` (a stream's versions are created in order, so the first one young
 * enough ends the expired prefix; found by a range scan of the stream's index from the floor;
 * the age is compared in seconds, so no `max_age` can take a timestamp out of range).
 * The log's readers use the row-wise form of the same rules (`hiddenReason`).
 *
 * A stream of a deleted tenant (its stored id `<tenant>/<id>`, docs/tenants.md) is tombstoned,
 * every version deleted: the tenant is gone for good.
 */
export function streamWindow(category: string): string {
  if (!/^\$\d+$/.test(category)) throw new TypeError(`Bad parameter ${category}`);
  return `head AS (
             SELECT coalesce((SELECT version FROM ${TABLES.streams} WHERE stream_id = $1), 0) AS version
           ), st AS (
             SELECT * FROM ${TABLES.streamStates} WHERE stream_id = $1
           ), cr AS (
             SELECT * FROM ${TABLES.categoryRules} WHERE category = ${category}
           ), gone AS (
             SELECT strpos($1::text, '/') > 0 AND EXISTS (
                      SELECT 1 FROM ${TABLES.deletedTenants} d WHERE d.tenant = split_part($1::text, '/', 1)) AS tenant_deleted
           ), rules AS (
             SELECT CASE WHEN (SELECT tenant_deleted FROM gone) THEN 'tombstoned'
                         ELSE coalesce((SELECT state FROM st), 'live') END AS state,
                    CASE WHEN (SELECT tenant_deleted FROM gone) THEN (SELECT version FROM head)
                         ELSE coalesce((SELECT deleted_through FROM st), 0) END AS deleted_through,
                    coalesce((SELECT truncate_before FROM st), (SELECT truncate_before FROM cr)) AS truncate_before,
                    coalesce((SELECT max_count FROM st), (SELECT max_count FROM cr)) AS max_count,
                    coalesce((SELECT max_age FROM st), (SELECT max_age FROM cr)) AS max_age
           ), lowest AS (
             SELECT greatest(rules.deleted_through + 1, coalesce(rules.truncate_before, 1),
                             coalesce(head.version - rules.max_count + 1, 1)) AS v
             FROM rules, head
           ), visible AS (
             SELECT lowest.v AS floor,
                    CASE WHEN rules.max_age IS NULL THEN lowest.v
                    ELSE coalesce((SELECT m.stream_version FROM ${TABLES.messages} m
                                   WHERE m.stream_id = $1 AND m.stream_version >= lowest.v
                                     AND extract(epoch FROM now() - m.created_at) <= rules.max_age
                                   ORDER BY m.stream_version LIMIT 1), head.version + 1) END AS first
             FROM rules, lowest, head
           )`;
}

/** The columns a read reports about the window (`StreamWindowRow`). */
export const STREAM_WINDOW_COLUMNS = `(SELECT state FROM rules) AS state,
  (SELECT deleted_through::text FROM rules) AS deleted_through,
  (SELECT floor::text FROM visible) AS floor, (SELECT first::text FROM visible) AS first_visible`;

/** What `STREAM_WINDOW_COLUMNS` give. */
export interface StreamWindowRow {
  state: 'live' | 'deleted' | 'tombstoned';
  deleted_through: string;
  floor: string;
  first_visible: string;
}
