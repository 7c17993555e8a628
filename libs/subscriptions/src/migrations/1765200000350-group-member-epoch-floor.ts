import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Members declared dead kept their row for as long as the group lived, so that their old epoch
 * stayed refused: a group consumed by short-lived members (serverless functions, autoscaled
 * pods, each with a fresh id) grew a row per member ever seen, all of them in its status.
 * A member dead for longer than the retention (`ORDINAL_GROUP_MEMBER_RETENTION_MS`) is now
 * removed, and the group remembers the highest epoch it removed: an id that comes back starts
 * above it, so none of its old epochs can ever be accepted again.
 *
 * A column with a constant default: PostgreSQL records the default, no row is rewritten.
 */
export class GroupMemberEpochFloor1765200000350 implements MigrationInterface {
  name = 'GroupMemberEpochFloor1765200000350';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE consumer_groups ADD COLUMN member_epoch_floor bigint NOT NULL DEFAULT 0`,
    );
    await queryRunner.query(`COMMENT ON COLUMN consumer_groups.member_epoch_floor IS
      'The highest epoch of the members removed after their retention: a member id that joins again starts above it, so its old epochs stay refused'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE consumer_groups DROP COLUMN member_epoch_floor`);
  }
}
