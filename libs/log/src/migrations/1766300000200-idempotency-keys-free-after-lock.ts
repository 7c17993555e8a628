import type { MigrationInterface, QueryRunner } from 'typeorm';
import { pinFunction } from '@ordinal/pg';

/**
 * A publish with an idempotency key took a transaction of five round trips in both modes
 * (BEGIN, the lock, the keys read, INSERT, COMMIT; issue 30), because what it writes depends on
 * whether a key is stored already, and a single statement's snapshot predates its lock wait.
 *
 * This function tells whether none of the keys is stored (`message_keys` holds every key the
 * log has, archived segments' included). The one-statement flushes (`appendBatch`,
 * `appendConcurrentStreams`) call it after their lock function, in a `CASE` that runs it only
 * once the locks are held: a VOLATILE function's query takes a fresh snapshot (in READ
 * COMMITTED), so it sees every key committed before the locks were granted. A key found sends
 * the flush to the transaction, which answers the repeat; a new key, the usual case, costs
 * one statement.
 *
 * A function, no table: nothing is copied.
 */
export class IdempotencyKeysFreeAfterLock1766300000200 implements MigrationInterface {
  name = 'IdempotencyKeysFreeAfterLock1766300000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION ordinal_idempotency_keys_free(p_keys text[])
      RETURNS boolean LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        -- A query of its own, after the caller's locks: a fresh snapshot.
        RETURN NOT EXISTS (SELECT 1 FROM message_keys k WHERE k.idempotency_key = ANY(p_keys));
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_idempotency_keys_free(text[])',
      'Tells whether none of the idempotency keys is stored (message_keys), in a fresh snapshot: the one-statement flushes call it after taking their locks',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION ordinal_idempotency_keys_free(text[])`);
  }
}
