import type { MigrationInterface, QueryRunner } from 'typeorm';
import { describeSchema, forgetSchemaDescriptions, type TableDescription } from '@ordinal/pg';

const RETENTION = {
  max_age:
    'Retention: events older than this many seconds are hidden (read as tombstones, reason expired).',
  max_count:
    'Retention: only the newest this many events are visible; older ones are hidden (expired).',
  truncate_before:
    'Retention: versions below this one are hidden (read as tombstones, reason truncated).',
  custom: 'The metadata’s free `custom` object, as the client set it.',
  metadata_version:
    'The metadata’s own version (0: never set): a PUT with an expected version checks it.',
  updated_at: 'When the row last changed.',
};

/** Descriptions of the tables and columns the stream lifecycle and stream tickets added. */
const TABLES: Record<string, TableDescription> = {
  stream_states: {
    comment:
      'Streams with a lifecycle (docs/lifecycle.md): deleted or tombstoned, or with metadata and retention settings. Most streams have no row.',
    columns: {
      stream_id: 'The stream id.',
      state:
        'live, deleted (soft: hidden from stream reads; re-created by a no_stream or any append) or tombstoned (for ever).',
      deleted_through:
        'Versions up to this one were deleted (soft delete): read as tombstones, reason deleted.',
      ...RETENTION,
    },
  },
  category_rules: {
    comment:
      'Retention settings for every stream of a category (PUT /api/streams/<category>-*/metadata); a stream’s own settings win.',
    columns: { category: 'The category (stream ids up to their first "-").', ...RETENTION },
  },
  scavenge_runs: {
    comment:
      'One row per scavenge run (POST /api/admin/scavenge): hidden rows erased in place in batches, each batch committed with this row’s progress, so a run killed halfway resumes.',
    columns: {
      id: 'The run’s id.',
      status: 'running, finished or failed.',
      started_at: 'When the run started.',
      updated_at: 'When its last batch committed.',
      finished_at: 'When it finished or failed (null while running).',
      through: 'The highest index the run covers (the head when it started).',
      position: 'Every hidden row at or below this index is erased.',
      rows_erased: 'Rows whose body and metadata this run erased.',
      bytes_freed: 'Bytes of body and metadata erased (before VACUUM returns them).',
      batches: 'Batches committed.',
      table_bytes_before:
        'Size of the messages table (with TOAST and indexes) when the run started.',
      table_bytes_after: 'Its size after the run’s VACUUM.',
      error: 'Why the run failed (null otherwise).',
    },
  },
  stream_ticket_nonces: {
    comment:
      'Nonces of stream tickets already used, each kept until its ticket expires: a ticket is single-use across every server process and restart.',
    columns: {
      nonce: 'The ticket’s nonce, claimed by the first server process that saw it.',
      expires_at: 'When the ticket expires (the row is deleted some time after).',
    },
  },
};

/** Columns of the log whose meaning the lifecycle and the duplicate window changed. */
const MESSAGES: Record<string, TableDescription> = {
  messages: {
    comment:
      'The log: every message Ordinal stored, one row each, at its global index. Written only through Ordinal (see docs/guarantees.md); a row is never deleted, and only a scavenge changes one: it erases body and metadata of a hidden row in place (docs/lifecycle.md).',
    columns: {
      erased:
        'Null while the row holds its body and metadata; otherwise the reason a scavenge erased them in place (deleted, truncated, expired): the row reads as a tombstone.',
      content_hash:
        'SHA-256 of the body’s canonical JSON (RFC 8785), which a reader can recompute from the body it gets.',
    },
  },
};

const SEQUENCES = { scavenge_runs_id_seq: 'Ids of scavenge_runs.' };

export class LifecycleSchemaComments1765400000010 implements MigrationInterface {
  name = 'LifecycleSchemaComments1765400000010';

  async up(queryRunner: QueryRunner): Promise<void> {
    await describeSchema(queryRunner, { ...TABLES, ...MESSAGES }, SEQUENCES);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await forgetSchemaDescriptions(queryRunner, TABLES, SEQUENCES);
    await queryRunner.query('COMMENT ON COLUMN messages.erased IS NULL');
  }
}
