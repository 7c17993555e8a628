import type { MigrationInterface, QueryRunner } from 'typeorm';

/** 2^53 − 1 (`MAX_POSITION` of @ordinal/pg), written out: a migration must not change with the code. */
const MAX_POSITION = '9007199254740991';

/**
 * Concurrent mode draws positions from `messages_index_seq`; with this MAXVALUE, `nextval`
 * refuses (SQLSTATE 2200H, which the writer answers as `log_full`) instead of handing out a
 * position beyond the last one every JSON reader reads exactly, so such a row never commits.
 * A sequence already past it (a log written before this rule) is capped where it stands: it
 * hands out nothing more.
 */
export class SequenceMaxPosition1764460800211 implements MigrationInterface {
  name = 'SequenceMaxPosition1764460800211';

  async up(queryRunner: QueryRunner): Promise<void> {
    const [{ max }] = (await queryRunner.query(
      `SELECT greatest(last_value, $1::bigint)::text AS max FROM messages_index_seq`,
      [MAX_POSITION],
    )) as { max: string }[];
    // ALTER SEQUENCE takes no parameters; `max` is a bigint PostgreSQL just printed.
    if (!/^\d+$/.test(max)) throw new Error(`Unexpected sequence value ${max}`);
    await queryRunner.query(`ALTER SEQUENCE messages_index_seq MAXVALUE ${max}`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER SEQUENCE messages_index_seq NO MAXVALUE`);
  }
}
