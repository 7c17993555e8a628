import type { SqlQuery } from '@ordinal/pg';
import { TABLES, hiddenReason } from '@ordinal/log/internal';
import type { ConsumerGroupDefinition } from '../group-definition.js';
import { GROUP_TABLES } from '../group-tables.js';

const D = GROUP_TABLES.deliveries;
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

/**
 * Reads the log on after `after` up to `upTo` (a safe head read before, or no bound for one
 * category, whose positions commit in order) straight into the group's deliveries: the
 * matching messages' indices and ordering keys, nothing else, at most `limit`. Returns the
 * indices read (the read covers up to the last one when `limit` were found, else `upTo`).
 */
export function fillDeliveries(
  group: string,
  definition: ConsumerGroupDefinition,
  after: number,
  upTo: number,
  limit: number,
): SqlQuery {
  const { source } = definition;
  const filter =
    'types' in source
      ? 'AND m.message_type = ANY($5::text[])'
      : 'category' in source
        ? 'AND m.category = $5::text'
        : 'AND $5::text IS NULL';
  const key = keySql(definition);
  const values: unknown[] = [
    group,
    after,
    upTo,
    limit,
    'types' in source ? source.types : 'category' in source ? source.category : null,
  ];
  if (key.path) values.push(key.path);
  return {
    text: `WITH read AS (
             SELECT m.index, ${key.sql} AS key FROM ${M} m
             WHERE m.index > $2 AND m.index <= $3 ${filter} AND (${HIDDEN}) IS NULL
             ORDER BY m.index LIMIT $4
           ), added AS (
             INSERT INTO ${D} (group_name, index, key, late) SELECT $1, index, key, false FROM read
             ON CONFLICT (group_name, index) DO NOTHING
           )
           -- Sorted by the bigint, not the text column of the same name (text puts 1000 before 999).
           SELECT read.index::text AS index FROM read ORDER BY read.index`,
    values,
  };
}
