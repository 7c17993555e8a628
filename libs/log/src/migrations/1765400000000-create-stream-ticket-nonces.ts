import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The nonces of the Ordinal server's stream tickets already used, each kept until its ticket expires: a ticket is
 * claimed here, once, by whichever server process on the database sees it first, so it stays
 * single-use across processes and restarts. Rows live at most a ticket's life (30 s by
 * default); `expires_at` is indexed for the cleanup that deletes them. One of the log's migrations
 * (not the server's alone) so that every database `ordinal migrate` or a service prepares has
 * it, and a replica reader's schema check finds the same list everywhere.
 */
export class CreateStreamTicketNonces1765400000000 implements MigrationInterface {
  name = 'CreateStreamTicketNonces1765400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE stream_ticket_nonces (
      nonce text PRIMARY KEY,
      expires_at timestamptz NOT NULL
    )`);
    await queryRunner.query(
      'CREATE INDEX stream_ticket_nonces_expires_at ON stream_ticket_nonces (expires_at)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE stream_ticket_nonces');
  }
}
