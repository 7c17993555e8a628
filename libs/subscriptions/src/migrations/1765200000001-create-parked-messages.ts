import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Messages a subscription or projection set aside under its `park` error policy: its name,
 * the message's position and type, the handler's last error and how often it failed. Replaying
 * one deletes its row in the transaction that applies it.
 */
export class CreateParkedMessages1765200000001 implements MigrationInterface {
  name = 'CreateParkedMessages1765200000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE parked_messages (
      consumer text NOT NULL,
      position bigint NOT NULL,
      message_type text NOT NULL,
      error text NOT NULL,
      attempts integer NOT NULL DEFAULT 1,
      parked_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (consumer, position)
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE parked_messages');
  }
}
