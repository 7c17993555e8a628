import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A process's heartbeat rewrites its `consumer_processes` row every few seconds. With
 * `expires_at` indexed, no such update could be HOT (heap-only: the row rewritten in its page,
 * no index touched), so each left a dead tuple and a dead index entry behind (771 updates, 0
 * HOT, 337 dead tuples for one live row in 10 minutes). No query needs the index: the table
 * holds one row per running process, and the two queries on `expires_at` (the members of a
 * group, forgetting dead processes) read it whole. Room is left in each page so the new
 * version fits beside the old one.
 */
export class ProcessesHotHeartbeats1765300000002 implements MigrationInterface {
  name = 'ProcessesHotHeartbeats1765300000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX IF EXISTS consumer_processes_expires_ix');
    await queryRunner.query('ALTER TABLE consumer_processes SET (fillfactor = 50)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE consumer_processes RESET (fillfactor)');
    await queryRunner.query(
      'CREATE INDEX consumer_processes_expires_ix ON consumer_processes (expires_at)',
    );
  }
}
