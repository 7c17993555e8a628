import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Replayable interfaces' bookmarks: one row per interface, the highest index its
 * consumer has acknowledged together with every index before it (in whole batches).
 */
export class CreateInterfaceBookmarks1765100000000 implements MigrationInterface {
  name = 'CreateInterfaceBookmarks1765100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE interface_bookmarks (
      name text PRIMARY KEY,
      position bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT interface_bookmarks_position_non_negative CHECK (position >= 0)
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE interface_bookmarks');
  }
}
