import { numberOption } from '@ordinal/pg';
import {
  checkGroupDeclarations,
  type ConsumerGroupDeclaration,
} from './groups/group-definition.js';

/** Options of `SubscriptionsModule.forRoot`. Every default lives in `resolveSubscriptionsOptions`. */
export interface SubscriptionsModuleOptions {
  /** Most messages one batch (one transaction) applies. @default 500 */
  batchSize?: number;
  /** Safety-net poll when nothing woke a subscription (other processes' commits, ms). @default 250 */
  idlePollMs?: number;
  /** Poll while the low watermark holds a hole, so its release is seen at once (ms). @default 5 */
  holdPollMs?: number;
  /** First retry delay after a failed batch; doubles up to `retryMaxMs`. @default 250 */
  retryInitialMs?: number;
  /** Longest retry delay after failed batches (ms). @default 30000 */
  retryMaxMs?: number;
  /** How often positions a subscription passed inside abandoned holes are checked for late arrivals (ms). @default 1000 */
  lateCheckMs?: number;
  /** A consumer behind the head whose checkpoint has not moved for this long is stuck (health). @default 60000 */
  stuckAfterMs?: number;
  /** Run the checkpoints migration at start. @default true */
  migrate?: boolean;
  /**
   * A consumer group member silent for this long is declared dead and the events it holds go
   * to the others (docs/consumer-groups.md). Env `ORDINAL_GROUP_MEMBER_TIMEOUT_MS`. @default 10000
   */
  groupMemberTimeoutMs?: number;
  /**
   * A consumer group member dead for this long (its lease expired this long ago) is removed from
   * the group: it leaves the status, and its id, if it ever comes back, starts above every epoch
   * the group gave before (its old ones stay refused). Env `ORDINAL_GROUP_MEMBER_RETENTION_MS`.
   * @default 86400000 (a day)
   */
  groupMemberRetentionMs?: number;
  /** How often a waiting consumer group fetch or stream looks again when nothing woke it (ms). @default 100 */
  groupPollMs?: number;
  /** Consumer groups defined (created, or their settings updated) at start (docs/consumer-groups.md). @default [] */
  consumerGroups?: ConsumerGroupDeclaration[];
}

export type ResolvedSubscriptionsOptions = Required<SubscriptionsModuleOptions>;

/** Applies the defaults, in this one place. */
export function resolveSubscriptionsOptions(
  options: SubscriptionsModuleOptions = {},
): ResolvedSubscriptionsOptions {
  return {
    batchSize: options.batchSize ?? 500,
    idlePollMs: options.idlePollMs ?? 250,
    holdPollMs: options.holdPollMs ?? 5,
    retryInitialMs: options.retryInitialMs ?? 250,
    retryMaxMs: options.retryMaxMs ?? 30_000,
    lateCheckMs: options.lateCheckMs ?? 1000,
    stuckAfterMs: numberOption(options.stuckAfterMs, {
      option: 'subscriptions.stuckAfterMs',
      env: 'ORDINAL_STUCK_AFTER_MS',
      fallback: 60_000,
      min: 100,
      unit: 'ms',
    }),
    migrate: options.migrate ?? true,
    groupMemberTimeoutMs: numberOption(options.groupMemberTimeoutMs, {
      option: 'subscriptions.groupMemberTimeoutMs',
      env: 'ORDINAL_GROUP_MEMBER_TIMEOUT_MS',
      fallback: 10_000,
      min: 100,
      unit: 'ms',
    }),
    groupMemberRetentionMs: numberOption(options.groupMemberRetentionMs, {
      option: 'subscriptions.groupMemberRetentionMs',
      env: 'ORDINAL_GROUP_MEMBER_RETENTION_MS',
      fallback: 86_400_000,
      min: 100,
      unit: 'ms',
    }),
    groupPollMs: options.groupPollMs ?? 100,
    // Checked here, where the options are read: a bad declaration stops the start before anything runs
    consumerGroups: checkGroupDeclarations(options.consumerGroups ?? []),
  };
}
