import type { MigrationInterface, QueryRunner } from 'typeorm';
import { describeSchema, type TableDescription } from '@ordinal/pg';

const TABLES: Record<string, TableDescription> = {
  personal_data_rules: {
    comment:
      'Which fields of a message type are personal data, and whose (docs/personal-data.md); managed over PUT /api/personal-data/rules/:messageType and the rules file.',
    columns: {
      message_type: 'The message type the rule applies to.',
      rule: 'The rule: {subject: JSON pointer, fields: [JSON pointers], replacement: {pointer: value}}.',
      source: 'Who set it: api or file.',
      updated_at: 'When it was last set.',
    },
  },
  erasure_ledger: {
    comment:
      'Every erasure of a subject’s personal data (docs/personal-data.md). Reapplied at every start: the keys it names are destroyed again, so a key store restored from an older backup forgets again. Keep its backups as long as the data’s.',
    columns: {
      subject_hash: 'SHA-256 (hex) of the erased subject’s id.',
      erased_at: 'When the erasure answered.',
      reason: 'The reason given with the erasure.',
      marker_index: 'Index of the $subject-erased marker the erasure appended.',
    },
  },
};

/**
 * Personal data (issue 25): the `personal` column of the log (added without a default, so no
 * row is rewritten), the rules and the erasure ledger. The key store is not here: it lives
 * apart (its own schema or database) and is made by the key store at start.
 */
export class PersonalData1766000000000 implements MigrationInterface {
  name = 'PersonalData1766000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE messages ADD COLUMN personal jsonb`);
    await queryRunner.query(
      `COMMENT ON COLUMN messages.personal IS 'The message''s personal fields sealed under its subject''s key (docs/personal-data.md): {subject: SHA-256 of the subject id, fields: [pointers], sealed: the fields'' values as one AES-256-GCM box, base64}; the body holds their replacements. NULL for most messages.'`,
    );
    await queryRunner.query(
      `CREATE INDEX messages_personal_subject ON messages ((personal->>'subject'), stream_id) WHERE personal IS NOT NULL`,
    );
    await queryRunner.query(`CREATE TABLE personal_data_rules (
      message_type text PRIMARY KEY,
      rule jsonb NOT NULL,
      source text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now())`);
    await queryRunner.query(`CREATE TABLE erasure_ledger (
      subject_hash text PRIMARY KEY,
      erased_at timestamptz NOT NULL DEFAULT now(),
      reason text NOT NULL,
      marker_index bigint)`);
    await describeSchema(queryRunner, TABLES);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE erasure_ledger');
    await queryRunner.query('DROP TABLE personal_data_rules');
    await queryRunner.query('DROP INDEX messages_personal_subject');
    await queryRunner.query('ALTER TABLE messages DROP COLUMN personal');
  }
}
