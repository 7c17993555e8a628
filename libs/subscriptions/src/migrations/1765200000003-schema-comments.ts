import type { MigrationInterface, QueryRunner } from 'typeorm';
import { describeSchema, forgetSchemaDescriptions, type TableDescription } from '@ordinal/pg';

const TABLES: Record<string, TableDescription> = {
  checkpoints: {
    comment:
      'Where each subscription and projection is: the position applied so far (moved in the transaction of the batch it applies), its state and last error.',
    columns: {
      name: 'The consumer’s name (a partition is name#n).',
      kind: 'subscription or projection.',
      position: 'Every message up to this index has been applied (or was not for it).',
      live_from: 'The head when it first started or was last rebuilt: the replay boundary.',
      state: 'running, stopped, failed or rebuilding.',
      last_error: 'The last handler error, for an operator.',
      updated_at: 'When the row last changed.',
      stream:
        'What it reads (all messages, types, a category), shown to processes that do not run it.',
      progressed_at: 'When position last moved (the stuck check reads it).',
    },
  },
  parked_messages: {
    comment:
      'Messages a consumer set aside under its park error policy; replaying one deletes its row in the transaction that applies it.',
    columns: {
      consumer: 'The consumer that parked it.',
      position: 'The message’s index.',
      message_type: 'The message’s type.',
      error: 'The handler’s last error.',
      attempts: 'How often the handler failed on it.',
      parked_at: 'When it was parked.',
    },
  },
  consumer_requests: {
    comment:
      'Operations (rebuild, replay parked, resume) for a consumer, carried to whichever process owns it; that process runs them and records the outcome.',
    columns: {
      id: 'Request id.',
      consumer: 'The consumer it is for.',
      command: 'The operation.',
      requested_at: 'When it was asked for.',
      done_at: 'When the owner finished it; null while pending.',
      result: 'What the operation returned, JSON.',
      error: 'Why it failed, if it did.',
    },
  },
};

const SEQUENCES = { consumer_requests_id_seq: 'Ids of consumer_requests rows.' };

/** Describes the subscriptions' tables, columns and sequence for a DBA (`COMMENT ON`). */
export class SubscriptionsSchemaComments1765200000003 implements MigrationInterface {
  name = 'SubscriptionsSchemaComments1765200000003';

  async up(queryRunner: QueryRunner): Promise<void> {
    await describeSchema(queryRunner, TABLES, SEQUENCES);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await forgetSchemaDescriptions(queryRunner, TABLES, SEQUENCES);
  }
}
