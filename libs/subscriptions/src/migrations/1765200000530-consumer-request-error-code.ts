import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A request's owner recorded only the message of the error it raised, so the requester could
 * answer nothing but `consumer_request_failed` (a 503 to retry) for a refusal that retrying can
 * never lift (a blue/green rebuild while a candidate is being built: 409 in-process). The code
 * of a typed error is recorded beside it, and the requester raises an error of that code.
 *
 * A nullable column without a default: no row is rewritten. Rows of an owner that does not
 * write it keep a null code (answered as before).
 */
export class ConsumerRequestErrorCode1765200000530 implements MigrationInterface {
  name = 'ConsumerRequestErrorCode1765200000530';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE consumer_requests ADD COLUMN error_code text`);
    await queryRunner.query(`COMMENT ON COLUMN consumer_requests.error_code IS
      'The code of the error, when it was a typed Ordinal error: the requester raises an error of that code (its HTTP status)'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE consumer_requests DROP COLUMN error_code`);
  }
}
