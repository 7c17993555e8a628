import type { MigrationInterface, QueryRunner } from 'typeorm';
import { pinFunction } from '@ordinal/pg';

/**
 * A row can no longer appear silently behind every reader. Concurrent mode records every
 * position the watermark passes without a row in `log_skipped`, and readers watch it for a
 * late row until `watch_until`; past that, a row inserted there by hand (an index chosen
 * outside Ordinal, or a `nextval` drawn long before) would reach nobody. This trigger refuses
 * such a row (SQLSTATE 23514, constraint `messages_index_passed`); a row inserted while its
 * position is watched is let through and its watch is extended until the row arrives
 * (`watch_until = infinity`, visible with the row when it commits), so a transaction that
 * holds on past the window is still delivered late everywhere.
 *
 * The hot path pays one comparison per row: the trigger's WHEN compares the index with
 * `log_passed_position`, a sequence the watermark moves (never back) to the highest position
 * it passes, before recording it. Ordinal's own appends draw above it (concurrent), insert
 * above it (a bulk import after the highest drawn position), or after a head moved past it
 * (gapless), so their rows never reach the function.
 *
 * Nothing is copied: `messages` gets a trigger, `log_skipped` is read once for the sequence's
 * start value.
 */
export class PassedPositionsGuard1764460800230 implements MigrationInterface {
  name = 'PassedPositionsGuard1764460800230';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE SEQUENCE log_passed_position AS bigint MINVALUE 0 START WITH 0 CACHE 1`,
    );
    await queryRunner.query(
      `SELECT setval('log_passed_position', greatest(
         (SELECT position FROM log_watermark WHERE id = 1),
         (SELECT max(position) FROM log_skipped), 0))`,
    );
    // Every role that may insert into messages reads it in the trigger's WHEN.
    await queryRunner.query(`GRANT SELECT ON SEQUENCE log_passed_position TO PUBLIC`);
    // Positions come from Ordinal's append path; nobody else is meant to draw them.
    await queryRunner.query(`REVOKE ALL ON SEQUENCE messages_index_seq FROM PUBLIC`);
    await queryRunner.query(`
      CREATE FUNCTION ordinal_check_passed_position() RETURNS trigger
      LANGUAGE plpgsql SECURITY DEFINER AS $fn$
      BEGIN
        -- The transaction id first: a late tracker that sees the watch over after this check
        -- takes a snapshot that counts this transaction as running, and waits for it.
        PERFORM pg_current_xact_id();
        UPDATE log_skipped SET watch_until = 'infinity'
        WHERE position = NEW.index AND arrived_at IS NULL AND watch_until > clock_timestamp();
        IF FOUND THEN
          RETURN NEW;
        END IF;
        -- A committed row there: let the primary key say so.
        IF EXISTS (SELECT 1 FROM messages WHERE index = NEW.index) THEN
          RETURN NEW;
        END IF;
        RAISE EXCEPTION USING
          ERRCODE = 'check_violation',
          CONSTRAINT = 'messages_index_passed',
          MESSAGE = format('position %s was passed by every reader: its late watch (ORDINAL_LATE_WATCH_MS) is over, so a row there would reach nobody', NEW.index),
          DETAIL = 'Concurrent ordering delivers a row at a passed position as late only while the position is watched.',
          HINT = 'Append through Ordinal (POST /api/events, the client, AMQP); never insert into messages by hand.';
      END
      $fn$`);
    // SECURITY DEFINER: the tables are found in this schema, whatever the caller's search_path.
    await pinFunction(queryRunner, 'ordinal_check_passed_position()');
    await queryRunner.query(`
      CREATE TRIGGER messages_index_passed BEFORE INSERT ON messages FOR EACH ROW
      WHEN (NEW.index <= coalesce(pg_sequence_last_value('log_passed_position'::regclass), 0))
      EXECUTE FUNCTION ordinal_check_passed_position()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER messages_index_passed ON messages`);
    await queryRunner.query(`DROP FUNCTION ordinal_check_passed_position()`);
    await queryRunner.query(`DROP SEQUENCE log_passed_position`);
  }
}
