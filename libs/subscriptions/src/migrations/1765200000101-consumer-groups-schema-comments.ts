import type { MigrationInterface, QueryRunner } from 'typeorm';
import { describeSchema, forgetSchemaDescriptions, type TableDescription } from '@ordinal/pg';

const GROUP = 'The group’s name.';

/** Descriptions of the consumer groups’ tables (docs/consumer-groups.md). */
const TABLES: Record<string, TableDescription> = {
  consumer_groups: {
    comment:
      'Consumer groups for external services (PUT /api/consumer-groups/:group): the definition and the one checkpoint of each.',
    columns: {
      name: GROUP,
      definition:
        'The definition as PUT (source, from, strategy, keyPath, ackTimeoutMs, maxDeliveries, maxInFlight, parkAfter).',
      checkpoint:
        'Every index at or below it is acknowledged, skipped or parked (or not the group’s): where the group resumes.',
      read_to: 'The log is read into deliveries up to here (checkpoint <= read_to).',
      created_at: 'When the group was defined.',
      updated_at: 'When its definition or checkpoint last changed.',
    },
  },
  consumer_group_members: {
    comment:
      'Members of each group with their lease; a member whose lease expired is dead and keeps its row, so its old epoch stays refused.',
    columns: {
      group_name: GROUP,
      member_id: 'The member’s id (given by the member, or made up by the server).',
      epoch: 'The lease epoch: an ack or nack with another epoch is 409 member_lease_lost.',
      lease_expires_at: 'When the member is declared dead unless it is heard from again.',
      server: 'The server process that last served it.',
      joined_at: 'When it joined.',
      last_seen_at: 'When it was last heard from (fetch, ack, nack or its stream).',
    },
  },
  consumer_group_deliveries: {
    comment:
      'Events of a group not yet done: ready (member_id null) or in flight to a member until deadline. Done events are deleted.',
    columns: {
      group_name: GROUP,
      index: 'The event’s global index.',
      key: 'Its ordering key (pinned_by_stream / pinned_by_key); null for round_robin.',
      member_id: 'The member holding it (null: ready).',
      epoch: 'That member’s epoch when it was handed over.',
      attempt: 'How many times it was delivered.',
      failures: 'How many times it was nacked with retry (parkAfter counts these).',
      deadline: 'When it goes back to the group unless acknowledged (ackTimeoutMs).',
      late: 'True for a late arrival (a row that committed inside a hole the group had passed).',
      last_error: 'The reason of its last nack.',
    },
  },
  consumer_group_parked: {
    comment:
      'Parked events of each group, as references; POST …/parked/replay delivers them again.',
    columns: {
      group_name: GROUP,
      index: 'The event’s global index.',
      reason: 'Why it was parked (maxDeliveries reached, or a nack with park).',
      attempts: 'Deliveries before it was parked.',
      parked_at: 'When it was parked.',
    },
  },
  consumer_group_watch: {
    comment: 'Concurrent mode: positions a group passed without a row, watched for a late arrival.',
    columns: {
      group_name: GROUP,
      position: 'The passed position.',
      passed_xmax: 'The transaction horizon when it was passed (a later row there is late).',
    },
  },
};

export class ConsumerGroupsSchemaComments1765200000101 implements MigrationInterface {
  name = 'ConsumerGroupsSchemaComments1765200000101';

  async up(queryRunner: QueryRunner): Promise<void> {
    await describeSchema(queryRunner, TABLES);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await forgetSchemaDescriptions(queryRunner, TABLES);
  }
}
