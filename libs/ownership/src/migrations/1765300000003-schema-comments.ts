import type { MigrationInterface, QueryRunner } from 'typeorm';
import { describeSchema, forgetSchemaDescriptions, type TableDescription } from '@ordinal/pg';

const TABLES: Record<string, TableDescription> = {
  consumer_leases: {
    comment:
      'Consumer ownership: one lease per consumer (projection, subscription, interface, or a partition of a projection). Held while expires_at is in the future by the database clock; a batch commits only if the lease still has the owner and epoch it started with.',
    columns: {
      name: 'The consumer (its name; a partition is name#n).',
      kind: 'projection, subscription or interface.',
      group_name: 'The group whose processes share these consumers out.',
      owner: 'The process holding it (consumer_processes.owner); null when free.',
      epoch: 'Incremented at every claim: the fence a batch checks before it commits.',
      expires_at: 'The lease ends then unless a heartbeat renews it (database clock).',
      acquired_at: 'When the current owner claimed it.',
      heartbeat_at: 'The owner’s last heartbeat.',
      registered_at: 'When a process first registered the consumer.',
      progress:
        'What the owner last reported of the consumer (an interface’s status, a realtime interface’s position), JSON.',
      progress_at: 'When progress was written.',
    },
  },
  consumer_processes: {
    comment:
      'One row per running process that owns consumers, rewritten at each heartbeat (kept HOT: no index on a column a heartbeat changes). Rows of processes dead for long are deleted.',
    columns: {
      owner: 'The process’s owner id (host, pid and a random part).',
      pid: 'Its operating-system process id.',
      host: 'Its host name.',
      started_at: 'When it started.',
      heartbeat_at: 'Its last heartbeat.',
      expires_at: 'It counts as gone after this (database clock) unless it heartbeats again.',
      groups: 'The consumer groups it runs.',
    },
  },
};

/** Describes the ownership tables and columns for a DBA (`COMMENT ON`); nothing else changes. */
export class OwnershipSchemaComments1765300000003 implements MigrationInterface {
  name = 'OwnershipSchemaComments1765300000003';

  async up(queryRunner: QueryRunner): Promise<void> {
    await describeSchema(queryRunner, TABLES);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await forgetSchemaDescriptions(queryRunner, TABLES);
  }
}
