import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Owners looked for consumer requests addressed to them every 250 ms, and every process with
 * projection code read `projection_versions` every 250 ms, mostly to find nothing: two queries
 * each a quarter of a second in every idle process. Row triggers on both tables now send
 * `NOTIFY ordinal_log` (the log's channel, which every process LISTENs on already) with
 * `consumer-request` or `projection-builds` when a row is written, whoever wrote it, delivered
 * at its commit; the processes look then, and poll only rarely (or at the old rate while
 * NOTIFY does not reach them).
 *
 * Row triggers (not statement ones): an UPDATE that changes no row (a process's start records
 * its tables `WHERE … IS DISTINCT FROM`) tells nobody. Several rows of one transaction send one
 * notification (PostgreSQL folds equal payloads). Triggers and a function, no table: nothing is
 * copied.
 */
export class ConsumerNotices1765200000800 implements MigrationInterface {
  name = 'ConsumerNotices1765200000800';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION ordinal_notify_consumers() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM pg_notify('ordinal_log', TG_ARGV[0]);
        RETURN NULL;
      END
      $fn$`);
    await queryRunner.query(`COMMENT ON FUNCTION ordinal_notify_consumers() IS
      'Tells every process (NOTIFY ordinal_log, <the trigger''s argument>) that a consumer request or a projection build was written: they look at once instead of polling'`);
    await queryRunner.query(
      `CREATE TRIGGER consumer_requests_notify AFTER INSERT ON consumer_requests
       FOR EACH ROW EXECUTE FUNCTION ordinal_notify_consumers('consumer-request')`,
    );
    await queryRunner.query(
      `CREATE TRIGGER projection_versions_notify AFTER INSERT OR UPDATE OR DELETE ON projection_versions
       FOR EACH ROW EXECUTE FUNCTION ordinal_notify_consumers('projection-builds')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER projection_versions_notify ON projection_versions`);
    await queryRunner.query(`DROP TRIGGER consumer_requests_notify ON consumer_requests`);
    await queryRunner.query(`DROP FUNCTION ordinal_notify_consumers()`);
  }
}
