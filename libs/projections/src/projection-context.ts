import type { MessageContext } from '@ordinal/subscriptions';

/**
 * What a projection handler gets second: `manager` (the batch's transaction, the checkpoint
 * moves in it), `index`, `isReplay` (hold side effects), `isLate`, the stored `message`, its
 * `tenant` (null for none; docs/tenants.md).
 */
export type ProjectionContext = MessageContext;
