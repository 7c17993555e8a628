import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A live router keeps catch-up pages for about two seconds, for feeds just behind. A delete,
 * metadata or a category rule hides messages at once, so a page read before it must not
 * serve a read that starts after it. The process that made the change dropped its own pages;
 * the others could serve a stale page for up to two seconds. Statement triggers on
 * `stream_states` and `category_rules` now send `NOTIFY ordinal_log, 'lifecycle'` with the
 * change (delivered at its commit), whoever wrote it, and every router drops its pages.
 *
 * Triggers and a function, no table: nothing is copied.
 */
export class LifecycleNotice1765500000010 implements MigrationInterface {
  name = 'LifecycleNotice1765500000010';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION ordinal_notify_lifecycle() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM pg_notify('ordinal_log', 'lifecycle');
        RETURN NULL;
      END
      $fn$`);
    await queryRunner.query(`COMMENT ON FUNCTION ordinal_notify_lifecycle() IS
      'Tells live routers (NOTIFY ordinal_log, ''lifecycle'') that stream states or retention rules changed: they drop catch-up pages read before'`);
    for (const table of ['stream_states', 'category_rules'])
      await queryRunner.query(
        `CREATE TRIGGER ${table}_notify AFTER INSERT OR UPDATE OR DELETE ON ${table}
         FOR EACH STATEMENT EXECUTE FUNCTION ordinal_notify_lifecycle()`,
      );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER category_rules_notify ON category_rules`);
    await queryRunner.query(`DROP TRIGGER stream_states_notify ON stream_states`);
    await queryRunner.query(`DROP FUNCTION ordinal_notify_lifecycle()`);
  }
}
