import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The dashboard's table (run by DashboardModule at start). */
export class CreateOrderDashboard1765300000000 implements MigrationInterface {
  name = 'CreateOrderDashboard1765300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE acme_order_dashboard (
      order_id text PRIMARY KEY,
      customer text NOT NULL,
      items int NOT NULL DEFAULT 0,
      total numeric NOT NULL DEFAULT 0,
      shipped boolean NOT NULL DEFAULT false,
      last_index bigint NOT NULL
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE acme_order_dashboard');
  }
}
