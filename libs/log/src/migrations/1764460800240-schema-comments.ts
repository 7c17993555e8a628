import type { MigrationInterface, QueryRunner } from 'typeorm';
import { describeSchema, forgetSchemaDescriptions, type TableDescription } from '@ordinal/pg';

const TABLES: Record<string, TableDescription> = {
  messages: {
    comment:
      'The log: every message Ordinal stored, one row each, at its global index. Written only through Ordinal (see docs/guarantees.md); never updated or deleted.',
    columns: {
      index:
        'The global index: 1, 2, 3, … in gapless mode; drawn from messages_index_seq in concurrent mode (holes possible). Every reader reads in this order.',
      message_type: 'The message type, 1-200 characters of [A-Za-z0-9._:-].',
      user_id: 'Who the message is about or from, as the producer gave it (null: none).',
      stream_id: 'The stream (aggregate) the message belongs to, when appended to one.',
      stream_version: 'Its version within stream_id (1, 2, 3, …; unique per stream).',
      category:
        'The stream category (stream_id up to its first "-"): what category locks and category reads use.',
      body: 'The content, JSON as the producer sent it.',
      metadata: 'Optional metadata, a JSON object.',
      schema_version: 'The schema version of body (upcasters move older versions forward).',
      content_hash:
        'SHA-256 of the canonical message (type, user, content, metadata): what the duplicate window compares.',
      idempotency_key:
        'The producer’s idempotency key (unique when given): a resend with it returns the stored message.',
      created_at: 'When it was stored (the transaction start, the server’s clock).',
      transaction_id: 'The id of the transaction that stored it.',
      correlation_id:
        'The chain it belongs to: every message caused by the same request shares it.',
      causation_id:
        'What caused it: a message index as text, or the id of the request that started the chain.',
      trace_parent:
        'The W3C traceparent of the append that stored it (a consumer continues that trace).',
    },
  },
  log_head: {
    comment:
      'Gapless mode: the highest index handed out (one row, id 1); the log lock serialises its moves.',
    columns: {
      id: 'Always 1: the table has one row.',
      position: 'The highest index handed out in gapless mode.',
    },
  },
  streams: {
    comment:
      'The current version of every stream (aggregate): what an append with an expected version checks.',
    columns: {
      stream_id: 'The stream id.',
      version: 'Its highest stored version.',
      updated_at: 'When the last append moved it.',
    },
  },
  log_skipped: {
    comment:
      'Concurrent mode: positions the watermark passed without a row (released once their writers ended, or abandoned at the gap timeout), watched for a late row.',
    columns: {
      position: 'The passed position.',
      abandoned_at: 'When it was recorded as passed.',
      held_ms: 'How long the watermark held at it before passing it (ms).',
      arrived_at: 'When a row found there later (a late arrival) was claimed; null while none.',
      released_exactly:
        'True: passed once every transaction that could fill it had ended; false: abandoned at the gap timeout.',
      watch_until:
        'Readers watch the position for a late row until then (infinity while a row inserted in time waits to commit); a row inserted after it is refused.',
    },
  },
  log_watermark: {
    comment:
      'Concurrent mode: the safe head a process reached and wrote down (one row, id 1): every position at or below it is final.',
    columns: {
      id: 'Always 1: the table has one row.',
      position: 'Every position at or below it is committed or recorded in log_skipped.',
      updated_at: 'When it was last written.',
    },
  },
  ordinal_migrations: {
    comment:
      'The migrations applied to this database, by every Ordinal module (run at start under an advisory lock).',
    columns: {
      id: 'Row id.',
      timestamp: 'The migration’s timestamp (the number in its name).',
      name: 'The migration’s class name.',
    },
  },
};

const SEQUENCES: Record<string, string> = {
  messages_index_seq:
    'Concurrent mode: hands out the indices of messages (CACHE 1; MAXVALUE 2^53 - 1). Only Ordinal’s append path draws from it.',
  log_passed_position:
    'The highest position any watermark has passed: a row inserted at or below it is refused unless its position is still watched (trigger messages_index_passed).',
  ordinal_migrations_id_seq: 'Ids of ordinal_migrations rows.',
};

/** Describes the log's tables, columns and sequences for a DBA (`COMMENT ON`); nothing else changes. */
export class SchemaComments1764460800240 implements MigrationInterface {
  name = 'SchemaComments1764460800240';

  async up(queryRunner: QueryRunner): Promise<void> {
    await describeSchema(queryRunner, TABLES, SEQUENCES);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await forgetSchemaDescriptions(queryRunner, TABLES, SEQUENCES);
  }
}
