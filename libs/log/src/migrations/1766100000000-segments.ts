import type { MigrationInterface, QueryRunner } from 'typeorm';
import { MAX_POSITION, pinFunction } from '@ordinal/pg';
import { DEFAULT_SEGMENT_SIZE, segmentTable } from '../segments/segment-range.js';

/**
 * Segments (issue 29, docs/storage.md): `messages` becomes a table range-partitioned by index,
 * and the table it was becomes its first partition, **without copying it**:
 *
 * 1. the table is renamed to its segment's name (`messages_0000000000000001`), its indexes too;
 * 2. a partitioned `messages` is created with the same columns, defaults, checks and comments;
 * 3. the old table gets `CHECK (index >= 1 AND index < end)` (NOT VALID, then validated: one
 *    sequential read, no rewrite), so `ATTACH PARTITION` trusts it and scans nothing; the check
 *    is dropped after (the partition bound says the same);
 * 4. the partitioned indexes are created on `messages`: each finds its twin on the old table
 *    and adopts it (nothing is built), except the stream index, which was UNIQUE and becomes a
 *    plain one (built once: the only write proportional to the log's size);
 * 5. uniqueness that a partitioned table cannot enforce across partitions moves to tables that
 *    can, in the same transaction as the append: an idempotency key to `message_keys` (its
 *    primary key keeps the old index's name, `messages_idempotency_key_uq`; a trigger records
 *    every keyed row, so COPY imports and every append path are covered), and a stream version
 *    to `streams` (`ordinal_move_stream_heads` moves a head only from the version the append
 *    was planned on, and raises the old index's unique violation otherwise).
 *
 * The first segment ends at the first multiple of the segment size (the configured one) above every position used
 * (the head, the sequence); the next segment is created here too, and later ones ahead of the
 * head by the log (`SegmentKeeper`). `log_segments` records each segment and its tier.
 */
export class Segments1766100000000 implements MigrationInterface {
  name = 'Segments1766100000000';
  /** The size the log is converted at: the configured one (`withSegmentSize`). */
  protected readonly segmentSize: number = DEFAULT_SEGMENT_SIZE;

  /** This migration converting at `size` indices per segment (the log's `segmentSize`). */
  static withSegmentSize(size: number): typeof Segments1766100000000 {
    return class extends Segments1766100000000 {
      protected override readonly segmentSize = size;
    };
  }

  async up(queryRunner: QueryRunner): Promise<void> {
    const size = this.segmentSize;
    const first = segmentTable(1);
    await queryRunner.query(`LOCK TABLE messages IN ACCESS EXCLUSIVE MODE`);
    const [{ used }] = (await queryRunner.query(
      `SELECT greatest((SELECT coalesce(max(index), 0) FROM messages),
                       (SELECT position FROM log_head WHERE id = 1),
                       (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM messages_index_seq))::text AS used`,
    )) as { used: string }[];
    const end = Math.min((Math.floor(Number(used) / size) + 1) * size + 1, MAX_POSITION + 1);

    await queryRunner.query(`ALTER TABLE messages RENAME TO ${first}`);
    for (const index of [
      'messages_pkey',
      'messages_type_index_ix',
      'messages_category_index_ix',
      'messages_correlation_ix',
      'messages_personal_subject',
    ])
      await queryRunner.query(
        `ALTER INDEX ${index} RENAME TO ${first}_${index.slice('messages_'.length)}`,
      );
    await queryRunner.query(
      `CREATE TABLE messages (LIKE ${first} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE
         INCLUDING COMPRESSION INCLUDING COMMENTS) PARTITION BY RANGE (index)`,
    );
    await queryRunner.query(
      `COMMENT ON TABLE messages IS 'The log: every message Ordinal stored, one row each, at its global index, in segments (partitions by index range, docs/storage.md). Written only through Ordinal (see docs/guarantees.md); a row is never deleted, and only a scavenge changes one: it erases body and metadata of a hidden row in place (docs/lifecycle.md).'`,
    );
    await queryRunner.query(
      `ALTER TABLE ${first} ADD CONSTRAINT ${first}_range CHECK (index >= 1 AND index < ${end}) NOT VALID`,
    );
    await queryRunner.query(`ALTER TABLE ${first} VALIDATE CONSTRAINT ${first}_range`);
    await queryRunner.query(
      `ALTER TABLE messages ATTACH PARTITION ${first} FOR VALUES FROM (1) TO (${end})`,
    );
    await queryRunner.query(`ALTER TABLE ${first} DROP CONSTRAINT ${first}_range`);

    await queryRunner.query(
      `ALTER TABLE messages ADD CONSTRAINT messages_pkey PRIMARY KEY (index)`,
    );
    await queryRunner.query(
      `CREATE INDEX messages_type_index_ix ON messages (message_type, index)`,
    );
    await queryRunner.query(
      `CREATE INDEX messages_category_index_ix ON messages (category, index) WHERE category IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX messages_correlation_ix ON messages (correlation_id, index) WHERE correlation_id IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX messages_personal_subject ON messages ((personal->>'subject'), stream_id) WHERE personal IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX messages_stream_version_ix ON messages (stream_id, stream_version) WHERE stream_id IS NOT NULL`,
    );
    await queryRunner.query(`DROP INDEX messages_stream_version_uq`);

    // Idempotency keys: their own table, fed by a trigger on every keyed row.
    await queryRunner.query(`CREATE TABLE message_keys (
      idempotency_key text NOT NULL,
      index bigint NOT NULL,
      CONSTRAINT message_keys_index_positive CHECK (index > 0)
    )`);
    await queryRunner.query(
      `INSERT INTO message_keys (idempotency_key, index)
       SELECT idempotency_key, index FROM ${first} WHERE idempotency_key IS NOT NULL`,
    );
    await queryRunner.query(`DROP INDEX messages_idempotency_key_uq`);
    await queryRunner.query(
      `ALTER TABLE message_keys ADD CONSTRAINT messages_idempotency_key_uq PRIMARY KEY (idempotency_key)`,
    );
    await queryRunner.query(
      `COMMENT ON TABLE message_keys IS 'Every idempotency key the log holds and the index of its message: the key''s uniqueness across segments (a partitioned table cannot enforce it). Written by the messages_idempotency_key trigger in the append''s transaction; never deleted.'`,
    );
    await queryRunner.query(
      `COMMENT ON COLUMN message_keys.idempotency_key IS 'The producer''s idempotency key (unique).'`,
    );
    await queryRunner.query(
      `COMMENT ON COLUMN message_keys.index IS 'The index of the message stored with it.'`,
    );
    await queryRunner.query(`
      CREATE FUNCTION ordinal_record_idempotency_key() RETURNS trigger
      LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO message_keys (idempotency_key, index) VALUES (NEW.idempotency_key, NEW.index);
        RETURN NEW;
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_record_idempotency_key()',
      'Trigger function of messages_idempotency_key: records a keyed row in message_keys (a second row with the key fails on its primary key, messages_idempotency_key_uq).',
    );
    await queryRunner.query(`
      CREATE TRIGGER messages_idempotency_key BEFORE INSERT ON messages FOR EACH ROW
      WHEN (NEW.idempotency_key IS NOT NULL)
      EXECUTE FUNCTION ordinal_record_idempotency_key()`);

    // The passed-position guard moves from the old table to the partitioned one (and so to
    // every segment).
    await queryRunner.query(`DROP TRIGGER messages_index_passed ON ${first}`);
    await queryRunner.query(`
      CREATE TRIGGER messages_index_passed BEFORE INSERT ON messages FOR EACH ROW
      WHEN (NEW.index <= coalesce(pg_sequence_last_value('log_passed_position'::regclass), 0))
      EXECUTE FUNCTION ordinal_check_passed_position()`);

    // Stream versions: a head moves only from the version its append was planned on.
    await queryRunner.query(`
      CREATE FUNCTION ordinal_move_stream_heads(p_streams text[], p_versions bigint[], p_priors bigint[])
      RETURNS integer LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        i integer;
      BEGIN
        -- One stream at a time, each by its primary key (a join with the arrays may be planned
        -- as a scan of every stream). Each statement takes a fresh snapshot, and an UPDATE
        -- re-reads a row changed since: a head another transaction moved is seen.
        FOR i IN 1 .. coalesce(cardinality(p_streams), 0) LOOP
          IF p_priors[i] = 0 THEN
            INSERT INTO streams (stream_id, version) VALUES (p_streams[i], p_versions[i])
            ON CONFLICT (stream_id) DO NOTHING;
          ELSE
            UPDATE streams SET version = p_versions[i], updated_at = now()
            WHERE stream_id = p_streams[i] AND version = p_priors[i];
          END IF;
          IF NOT FOUND THEN
            RAISE EXCEPTION USING
              ERRCODE = 'unique_violation',
              CONSTRAINT = 'messages_stream_version_uq',
              MESSAGE = format('stream %s is no longer at version %s: its versions are taken', p_streams[i], p_priors[i]),
              HINT = 'Append through Ordinal; the writer retries with the stream''s current version.';
          END IF;
        END LOOP;
        RETURN coalesce(cardinality(p_streams), 0);
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_move_stream_heads(text[], bigint[], bigint[])',
      'Moves stream heads (streams.version) to p_versions, each only from p_priors (0: a new stream); raises unique_violation (constraint messages_stream_version_uq) if any head is elsewhere: the uniqueness of a stream version across segments.',
    );

    // The segments' register.
    await queryRunner.query(`CREATE TABLE log_segments (
      first_index bigint PRIMARY KEY,
      end_index bigint NOT NULL,
      table_name text NOT NULL UNIQUE,
      tier text NOT NULL DEFAULT 'hot',
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT log_segments_range CHECK (first_index > 0 AND end_index > first_index),
      CONSTRAINT log_segments_tier CHECK (tier IN ('hot'))
    )`);
    await queryRunner.query(`CREATE TABLE log_segment_settings (
      id smallint PRIMARY KEY CHECK (id = 1),
      segment_size bigint NOT NULL CHECK (segment_size > 0)
    )`);
    await queryRunner.query(`INSERT INTO log_segment_settings (id, segment_size) VALUES (1, $1)`, [
      size,
    ]);
    await queryRunner.query(
      `INSERT INTO log_segments (first_index, end_index, table_name) VALUES (1, $1, $2)`,
      [end, first],
    );
    const tables = [first];
    if (end <= MAX_POSITION) {
      const next = segmentTable(end);
      const nextEnd = Math.min(end + size, MAX_POSITION + 1);
      await queryRunner.query(
        `CREATE TABLE ${next} (LIKE messages INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE
           INCLUDING COMPRESSION INCLUDING COMMENTS)`,
      );
      await queryRunner.query(
        `ALTER TABLE messages ATTACH PARTITION ${next} FOR VALUES FROM (${end}) TO (${nextEnd})`,
      );
      await queryRunner.query(
        `INSERT INTO log_segments (first_index, end_index, table_name) VALUES ($1, $2, $3)`,
        [end, nextEnd, next],
      );
      tables.push(next);
    }
    for (const table of tables)
      await queryRunner.query(
        `COMMENT ON TABLE ${table} IS 'A segment of the log (a partition of messages by index range; log_segments says which).'`,
      );
    await queryRunner.query(
      `COMMENT ON TABLE log_segments IS 'The log''s segments: the index range [first_index, end_index) of each partition of messages, its table and its tier (hot: in PostgreSQL).'`,
    );
    await queryRunner.query(
      `COMMENT ON COLUMN log_segments.first_index IS 'The segment''s first index.'`,
    );
    await queryRunner.query(
      `COMMENT ON COLUMN log_segments.end_index IS 'One past the segment''s last index.'`,
    );
    await queryRunner.query(
      `COMMENT ON COLUMN log_segments.table_name IS 'The partition of messages that holds it.'`,
    );
    await queryRunner.query(
      `COMMENT ON COLUMN log_segments.tier IS 'Where its rows are: hot (a partition of messages).'`,
    );
    await queryRunner.query(
      `COMMENT ON COLUMN log_segments.created_at IS 'When the segment was created (or, for the first, when the log became segmented).'`,
    );
    await queryRunner.query(
      `COMMENT ON TABLE log_segment_settings IS 'The segment size (indices per segment), fixed once the log holds a message (ORDINAL_SEGMENT_SIZE).'`,
    );
    await queryRunner.query(`COMMENT ON COLUMN log_segment_settings.id IS 'Always 1: one row.'`);
    await queryRunner.query(
      `COMMENT ON COLUMN log_segment_settings.segment_size IS 'Indices per segment: segment k covers [k * size + 1, (k + 1) * size + 1), after the first.'`,
    );
  }

  down(): Promise<void> {
    return Promise.reject(
      new Error('Segments1766100000000 is not reversible: a segmented log stays segmented'),
    );
  }
}
