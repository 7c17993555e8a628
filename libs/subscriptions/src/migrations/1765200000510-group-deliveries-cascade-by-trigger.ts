import type { MigrationInterface, QueryRunner } from 'typeorm';
import { pinFunction } from '@ordinal/pg';

/**
 * Every delivery row a fetch's read-on added ran the foreign key's check on its group (a query
 * per row, taking a share lock on the group's row the claim already holds FOR UPDATE), and so
 * did every row the same fetch then handed out: on a 2-core machine about half the cost of
 * adding the rows (docs/performance.md, "Consumer groups"). Nothing needs the check: a delivery
 * is only ever added by an operation holding its group's lock, after it found the group.
 *
 * What the key did on a group's delete, a trigger does now: it deletes the group's deliveries
 * in a query of its own, which sees every delivery committed while the delete waited for the
 * group (a cascade in the deleting statement's snapshot would miss those, and a group defined
 * again under the name would find them).
 *
 * A constraint dropped and a trigger: nothing is copied.
 */
export class GroupDeliveriesCascadeByTrigger1765200000510 implements MigrationInterface {
  name = 'GroupDeliveriesCascadeByTrigger1765200000510';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION ordinal_group_deleted() RETURNS trigger
      LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        DELETE FROM consumer_group_deliveries WHERE group_name = OLD.name;
        RETURN OLD;
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_group_deleted()',
      'Trigger: deletes a deleted consumer group’s deliveries (its members, parked references and watched positions go by their foreign keys), in a query that sees every delivery committed before.',
    );
    await queryRunner.query(`CREATE TRIGGER consumer_groups_deleted AFTER DELETE ON consumer_groups
      FOR EACH ROW EXECUTE FUNCTION ordinal_group_deleted()`);
    await queryRunner.query(`COMMENT ON TRIGGER consumer_groups_deleted ON consumer_groups IS
      'Deletes the group''s deliveries (which have no foreign key: a check per delivery added cost more than adding it)'`);
    await queryRunner.query(
      `ALTER TABLE consumer_group_deliveries DROP CONSTRAINT consumer_group_deliveries_group_name_fkey`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // NOT VALID: deliveries of a group deleted by hand in between would refuse the key; the key
    // checks every row added from now on.
    await queryRunner.query(`ALTER TABLE consumer_group_deliveries
      ADD CONSTRAINT consumer_group_deliveries_group_name_fkey FOREIGN KEY (group_name)
      REFERENCES consumer_groups (name) ON DELETE CASCADE NOT VALID`);
    await queryRunner.query(`DROP TRIGGER consumer_groups_deleted ON consumer_groups`);
    await queryRunner.query(`DROP FUNCTION ordinal_group_deleted()`);
  }
}
