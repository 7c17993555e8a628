import type { MigrationInterface, QueryRunner } from 'typeorm';
import { describeSchema, forgetSchemaDescriptions, type TableDescription } from '@ordinal/pg';

const TABLES: Record<string, TableDescription> = {
  interface_bookmarks: {
    comment:
      'Replayable AMQP interfaces: the highest index each one’s consumer acknowledged together with every index before it.',
    columns: {
      name: 'The interface’s name.',
      position: 'Acknowledged up to this index; a restart resends from the next.',
      updated_at: 'When it last moved.',
    },
  },
};

/** Describes the AMQP interfaces' table for a DBA (`COMMENT ON`). */
export class AmqpSchemaComments1765100000001 implements MigrationInterface {
  name = 'AmqpSchemaComments1765100000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await describeSchema(queryRunner, TABLES);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await forgetSchemaDescriptions(queryRunner, TABLES);
  }
}
