import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A replayable interface resumed its watch for late arrivals from its bookmark's save time
 * (`updated_at`): an arrival another process claimed just before a save, not yet handed to its
 * feed, was lost if it stopped before it got it. It now saves, with the bookmark, the earliest
 * time its feed still owed an arrival from (`LogFeed.arrivedSince`), and resumes with that.
 *
 * A nullable column without a default: no row is rewritten. Null marks a row written before
 * the column existed (a restart then counts from `updated_at`, as before); an interface that
 * owes nothing writes `infinity` (see sql/read-bookmark.sql.ts).
 */
export class BookmarkLateOwedSince1765100000100 implements MigrationInterface {
  name = 'BookmarkLateOwedSince1765100000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE interface_bookmarks ADD COLUMN late_owed_since timestamptz`,
    );
    await queryRunner.query(`COMMENT ON COLUMN interface_bookmarks.late_owed_since IS
      'No late arrival the interface still owed at or below its position was claimed before this (log_skipped.arrived_at): a restart watches those claimed since. infinity: it owed none; null: written before this column (a restart counts from updated_at)'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE interface_bookmarks DROP COLUMN late_owed_since`);
  }
}
