import { LOCKS, LOG_CHANNEL, SEQUENCE, TABLES } from '../log.constants.js';
import { LOCK_CATEGORIES } from './lock-categories.sql.js';
import { MAX_POSITION, type SqlQuery } from '@ordinal/pg';

/** Column-wise arrays of the rows one flush inserts (one multi-row statement, L2). */
export interface InsertColumns {
  index: number[];
  messageType: string[];
  userId: (string | null)[];
  streamId: (string | null)[];
  streamVersion: (number | null)[];
  category: (string | null)[];
  body: string[];
  metadata: (string | null)[];
  schemaVersion: number[];
  contentHash: string[];
  idempotencyKey: (string | null)[];
  correlationId: (string | null)[];
  causationId: (string | null)[];
  traceparent: (string | null)[];
  /** The sealed personal fields' JSON (`SealedFields`), else null (absent: none in the batch). */
  personal?: (string | null)[];
  /** The tenant (docs/tenants.md), else null (absent: none in the batch). */
  tenant?: (string | null)[];
}

/**
 * The stream heads a flush moves: each to `version`, only from `prior`, the version the flush
 * was planned on (0: a new stream). `ordinal_move_stream_heads` raises the unique violation
 * `messages_stream_version_uq` when a head is elsewhere: a stream version's uniqueness, which
 * the segmented messages table cannot enforce itself.
 */
export interface StreamHeads {
  streamId: string[];
  version: number[];
  prior: number[];
}

/** The stream states a flush changes (a delete, a tombstone, a re-created stream). */
export interface StreamStateChanges {
  streamId: string[];
  state: string[];
  deletedThrough: number[];
}

const NO_CHANGES: StreamStateChanges = { streamId: [], state: [], deletedThrough: [] };

/** The CTE that writes `changes` ($6, $7, $8 of the checked statements) into the states table. */
const STATES = `states AS (
        INSERT INTO ${TABLES.streamStates} (stream_id, state, deleted_through)
        SELECT * FROM unnest($6::text[], $7::text[], $8::bigint[])
        ON CONFLICT (stream_id) DO UPDATE
          SET state = excluded.state, deleted_through = excluded.deleted_through, updated_at = now()
        RETURNING 1
      )`;

const COLUMNS = `message_type, user_id, stream_id, stream_version, category, body, metadata, schema_version, content_hash, idempotency_key, correlation_id, causation_id, trace_parent, personal, tenant`;
/**
 * The batch's rows as one `json` parameter, expanded by `json_to_recordset`. One JSON text
 * built by concatenation costs the writer far less than ten PostgreSQL array literals (pg
 * escapes every element of those with two regex passes), and bodies, already JSON, go in
 * as they are. A JSON `null` body reads back as SQL NULL, hence the coalesce.
 */
const ROWS = `ROWS FROM (json_to_recordset($1::json) AS (message_type text, user_id text, stream_id text, stream_version bigint,
  category text, body jsonb, metadata jsonb, schema_version int, content_hash text, idempotency_key text,
  correlation_id text, causation_id text, trace_parent text, personal jsonb, tenant text))`;
const SELECT_ROW = `r.message_type, r.user_id, r.stream_id, r.stream_version, r.category,
               coalesce(r.body, 'null'::jsonb), r.metadata, r.schema_version, r.content_hash, r.idempotency_key,
               r.correlation_id, r.causation_id, r.trace_parent, r.personal, r.tenant`;

/** JSON of a scalar column value; a missing one is null, never the bare word `undefined`. */
const str = (value: string | number | null | undefined) => JSON.stringify(value ?? null);

/** The `json` parameter `ROWS` reads: an array of one object per row, keyed by column. */
export function rowsJson(rows: InsertColumns): string {
  const parts: string[] = [];
  for (let i = 0; i < rows.messageType.length; i++) {
    parts.push(
      `{"message_type":${str(rows.messageType[i])},"user_id":${str(rows.userId[i])},"stream_id":${str(rows.streamId[i])},` +
        `"stream_version":${str(rows.streamVersion[i])},"category":${str(rows.category[i])},"body":${rows.body[i] ?? 'null'},` +
        `"metadata":${rows.metadata[i] ?? 'null'},"schema_version":${str(rows.schemaVersion[i])},"content_hash":${str(rows.contentHash[i])},` +
        `"idempotency_key":${str(rows.idempotencyKey[i])},"correlation_id":${str(rows.correlationId[i])},` +
        `"causation_id":${str(rows.causationId[i])},"trace_parent":${str(rows.traceparent[i])},"personal":${rows.personal?.[i] ?? 'null'},"tenant":${str(rows.tenant?.[i])}}`,
    );
  }
  return `[${parts.join(',')}]`;
}

/**
 * Inside a locked flush (after `lockLog`): inserts the batch at `head - n + 1 .. head`,
 * moves the log head and the stream heads, and queues a NOTIFY with the new head (sent by
 * PostgreSQL only if the transaction commits).
 */
export function insertMessages(
  rows: InsertColumns,
  streams: StreamHeads,
  head: number,
  changes: StreamStateChanges = NO_CHANGES,
): SqlQuery {
  const first = head - rows.messageType.length + 1;
  return {
    text: `WITH ${STATES}, inserted AS (
        INSERT INTO ${TABLES.messages} (index, ${COLUMNS})
        SELECT $4::bigint + r.ord - 1, ${SELECT_ROW}
        FROM ${ROWS} WITH ORDINALITY AS r(${COLUMNS}, ord)
        RETURNING 1
      ), heads AS (
        SELECT ordinal_move_stream_heads($2::text[], $3::bigint[], $9::bigint[]) AS moved WHERE cardinality($2::text[]) > 0
      ), log AS (
        UPDATE ${TABLES.logHead} SET position = $5::bigint WHERE id = 1 RETURNING 1
      )
      SELECT (SELECT count(*) FROM inserted)::int AS inserted, (SELECT count(*) FROM log)::int AS moved,
             (SELECT count(*) FROM states)::int AS states, (SELECT moved FROM heads) AS heads,
             pg_notify('${LOG_CHANNEL}', $5::text) AS notified`,
    values: [
      rowsJson(rows),
      streams.streamId,
      streams.version,
      first,
      String(head),
      changes.streamId,
      changes.state,
      changes.deletedThrough,
      streams.prior,
    ],
  };
}

/** Versions an optimistic flush asserts: each stream must be at `expected` (0 = absent). */
export interface StreamExpectations {
  streamId: string[];
  expected: number[];
}

const NO_STREAMS = {
  streamId: [] as string[],
  expected: [] as number[],
  version: [] as number[],
  prior: [] as number[],
};

/** The batch's idempotency keys (as stored: a tenant's qualified). */
const keysOf = (rows: InsertColumns): string[] =>
  rows.idempotencyKey.filter((key): key is string => key !== null);

/**
 * `lock` (a lock function answering whether the streams are as planned), then, only once it
 * holds its locks and answered true, whether none of the keys in `keys` (a parameter) is stored
 * (`ordinal_idempotency_keys_free`, whose query sees every commit made before the locks were
 * granted); a batch without keys skips the lookup. A `CASE` runs its branches in order.
 */
const CHECKED_AFTER_LOCK = (lock: string, keys: string) =>
  `CASE WHEN NOT ${lock} THEN false WHEN cardinality(${keys}::text[]) = 0 THEN true
        ELSE ordinal_idempotency_keys_free(${keys}::text[]) END`;

/**
 * The whole gapless flush in one statement, for batches of no tenant, with exact expected
 * versions or none (most REST, AMQP and aggregate traffic): takes the log lock and then checks
 * the streams are at the versions the batch was planned for and live
 * (`ordinal_lock_log_and_check_streams`, whose query sees every commit made before the lock:
 * the statement's own snapshot is older) and that none of its idempotency keys is stored
 * (`ordinal_idempotency_keys_free`, likewise), takes the head row, inserts after the head,
 * moves the log and stream heads, and notifies. Run outside an explicit transaction it is one
 * round trip and one commit. When a stream is not where the plan assumed, it changes nothing and answers
 * `ok = false` (or fails on the stream-version index if it read an older snapshot) — the
 * caller then takes the checked path. So does a key already stored (a resend: the checked path
 * answers its repeat), and a stream with a `truncateBefore` or `maxCount` (its own or its
 * category's): the checked path reads them, to tell which appended messages
 * are hidden the moment they commit. When the batch would pass `MAX_POSITION` it changes
 * nothing either (`ok` with no `base`): the checked path decides which appends still fit.
 * Returns the first index given and the commit time.
 */
export function appendBatch(
  rows: InsertColumns,
  expectations: StreamExpectations = NO_STREAMS,
  heads: StreamHeads = NO_STREAMS,
): SqlQuery {
  const n = rows.messageType.length;
  return {
    text: `WITH expected AS (
        SELECT ${CHECKED_AFTER_LOCK('ordinal_lock_log_and_check_streams($2::bigint, $4::text[], $5::bigint[])', '$10')} AS ok
      ), head AS (
        UPDATE ${TABLES.logHead} h SET position = h.position + $3::bigint FROM expected
        WHERE h.id = 1 AND expected.ok AND h.position + $3::bigint <= $8::bigint
        RETURNING h.position - $3::bigint AS base, h.position AS head
      ), inserted AS (
        INSERT INTO ${TABLES.messages} (index, ${COLUMNS})
        SELECT head.base + r.ord, ${SELECT_ROW}
        FROM head, ${ROWS} WITH ORDINALITY AS r(${COLUMNS}, ord)
        RETURNING 1
      ), heads AS (
        SELECT ordinal_move_stream_heads($6::text[], $7::bigint[], $9::bigint[]) AS moved FROM head WHERE cardinality($6::text[]) > 0
      )
      SELECT expected.ok, head.base::text AS base, now() AS now,
             (SELECT count(*) FROM inserted)::int AS inserted, (SELECT moved FROM heads) AS heads,
             CASE WHEN head.head IS NULL THEN NULL ELSE pg_notify('${LOG_CHANNEL}', head.head::text) END AS notified
      FROM expected LEFT JOIN head ON true`,
    values: [
      rowsJson(rows),
      LOCKS.log,
      n,
      expectations.streamId,
      expectations.expected,
      heads.streamId,
      heads.version,
      String(MAX_POSITION),
      heads.prior,
      keysOf(rows),
    ],
  };
}

/**
 * Concurrent mode: inserts the batch with positions drawn from the sequence inside the
 * INSERT (after its table lock), moves the stream heads and notifies. Returns the indices
 * given, which ascend in row order.
 */
export function insertConcurrent(
  rows: InsertColumns,
  streams: StreamHeads,
  changes: StreamStateChanges = NO_CHANGES,
): SqlQuery {
  return {
    text: `WITH ${STATES.replace('$6', '$4').replace('$7', '$5').replace('$8', '$6')}, inserted AS (
        INSERT INTO ${TABLES.messages} (index, ${COLUMNS})
        SELECT nextval('${SEQUENCE}'), ${SELECT_ROW}
        FROM ${ROWS} WITH ORDINALITY AS r(${COLUMNS}, ord)
        ORDER BY r.ord
        RETURNING index
      ), heads AS (
        SELECT ordinal_move_stream_heads($2::text[], $3::bigint[], $7::bigint[]) AS moved WHERE cardinality($2::text[]) > 0
      ), top AS (SELECT max(index) AS head, array_agg(index::text) AS indices FROM inserted)
      SELECT top.indices, (SELECT moved FROM heads) AS heads, (SELECT count(*) FROM states)::int AS states,
             pg_notify('${LOG_CHANNEL}', top.head::text) AS notified FROM top`,
    values: [
      rowsJson(rows),
      streams.streamId,
      streams.version,
      changes.streamId,
      changes.state,
      changes.deletedThrough,
      streams.prior,
    ],
  };
}

/**
 * The whole concurrent flush in one statement, for batches without streams or idempotency
 * keys (nothing to read first): run outside an explicit transaction it is one round trip
 * and one commit, where the transactional path takes four. The order the watermark relies
 * on holds inside the statement:
 *
 * 1. the INSERT holds the messages table in RowExclusiveLock from parse time, before it
 *    draws anything, until the commit (what `readLogWriters` lists);
 * 2. `lock` takes the transaction id first (so the snapshot-xmax fallback counts this
 *    writer), then the categories' advisory locks in the given (sorted) order;
 * 3. every `nextval` is in the projection of a join with `lock`'s single row, which exists
 *    only once every lock is held: positions are drawn under the category locks, and the
 *    locks are released only after the commit, so one category's positions commit in order.
 *
 * Returns the indices given (ascending in row order) and the commit time.
 */
export function appendConcurrent(rows: InsertColumns, sortedLockKeys: string[]): SqlQuery {
  return {
    text: `WITH lock AS (${LOCK_CATEGORIES}), inserted AS (
        INSERT INTO ${TABLES.messages} (index, ${COLUMNS})
        SELECT nextval('${SEQUENCE}'), ${SELECT_ROW}
        FROM lock, ${ROWS} WITH ORDINALITY AS r(${COLUMNS}, ord)
        ORDER BY r.ord
        RETURNING index
      ), top AS (SELECT max(index) AS head, array_agg(index::text ORDER BY index) AS indices FROM inserted)
      SELECT top.indices, lock.now, lock.locks, pg_notify('${LOG_CHANNEL}', top.head::text) AS notified FROM top, lock`,
    values: [rowsJson(rows), sortedLockKeys],
  };
}

/**
 * Concurrent mode's append in one statement, for batches of no tenant whose streams all name
 * an exact expected version (no `any`), or with idempotency keys: run outside an explicit
 * transaction it is one round trip and one commit, where the transactional path takes five. The same order
 * as `appendConcurrent`, with the stream check between the locks and the positions:
 *
 * 1. the INSERT holds the messages table in RowExclusiveLock from parse time until the commit;
 * 2. `ordinal_lock_categories_and_check_streams` gives the transaction its id, then takes the
 *    categories' advisory locks in ascending order, then checks — in a query of its own, whose
 *    fresh snapshot sees every commit made before the locks were granted — that every stream
 *    is at the version the batch was planned for, live, and without a retention that hides
 *    on append, and then that none of the batch's idempotency keys is stored
 *    (`ordinal_idempotency_keys_free`, a fresh snapshot too);
 * 3. every `nextval` is in the projection of a join with `lock`'s one row, filtered on the
 *    check: positions are drawn under the locks, and none at all when a stream is elsewhere.
 *
 * When a stream is not where the plan assumed, or a key is stored, the statement changes
 * nothing, draws nothing and answers `ok = false`; a key another category's flush stores while
 * this one runs fails on its primary key (messages_idempotency_key_uq), after positions were
 * drawn (they become holes, as a rolled-back flush's do). Either way the caller then takes the
 * transactional path, which decides each append's outcome (and reads the lifecycle state and
 * retention this check turns away, and answers a stored key's repeat). The stream heads move
 * only with the rows. Returns `ok`, the indices given (ascending in row order) and the commit
 * time.
 */
export function appendConcurrentStreams(
  rows: InsertColumns,
  sortedLockKeys: string[],
  expectations: StreamExpectations,
  heads: StreamHeads,
): SqlQuery {
  return {
    text: `WITH lock AS (
        SELECT ${CHECKED_AFTER_LOCK('ordinal_lock_categories_and_check_streams($2::bigint[], $3::text[], $4::bigint[])', '$8')} AS ok, now() AS now
      ), inserted AS (
        INSERT INTO ${TABLES.messages} (index, ${COLUMNS})
        SELECT nextval('${SEQUENCE}'), ${SELECT_ROW}
        FROM lock, ${ROWS} WITH ORDINALITY AS r(${COLUMNS}, ord)
        WHERE lock.ok
        ORDER BY r.ord
        RETURNING index
      ), heads AS (
        SELECT ordinal_move_stream_heads($5::text[], $6::bigint[], $7::bigint[]) AS moved FROM lock WHERE lock.ok AND cardinality($5::text[]) > 0
      ), top AS (SELECT max(index) AS head, array_agg(index::text ORDER BY index) AS indices FROM inserted)
      SELECT lock.ok, top.indices, lock.now, (SELECT moved FROM heads) AS heads,
             CASE WHEN top.head IS NULL THEN NULL ELSE pg_notify('${LOG_CHANNEL}', top.head::text) END AS notified
      FROM lock, top`,
    values: [
      rowsJson(rows),
      sortedLockKeys,
      expectations.streamId,
      expectations.expected,
      heads.streamId,
      heads.version,
      heads.prior,
      keysOf(rows),
    ],
  };
}
