import type { MigrationInterface, QueryRunner } from 'typeorm';
import { describeSchema, forgetSchemaDescriptions, type TableDescription } from '@ordinal/pg';

const TABLES: Record<string, TableDescription> = {
  snapshots: {
    comment:
      'Aggregate snapshots, every one kept, keyed by (stream_id, version); a load starts from the newest whose schema_version matches the aggregate’s.',
    columns: {
      stream_id: 'The aggregate’s stream.',
      version: 'The stream version the state includes.',
      state: 'The aggregate’s state at that version, JSON.',
      schema_version:
        'The state’s own schema version: a snapshot of another is ignored and the stream replayed.',
      created_at: 'When it was saved.',
    },
  },
};

/** Describes the snapshots table for a DBA (`COMMENT ON`). */
export class EventSourcingSchemaComments1764547200001 implements MigrationInterface {
  name = 'EventSourcingSchemaComments1764547200001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await describeSchema(queryRunner, TABLES);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await forgetSchemaDescriptions(queryRunner, TABLES);
  }
}
