/** `@ordinal/subscriptions/internal`: for Ordinal's sibling libraries and server only; not a public API. */
export * from './subscriptions.constants.js';
export {
  SUBSCRIPTIONS_OPTIONS,
  SUBSCRIPTIONS_RAW_OPTIONS,
} from './subscriptions.module-definition.js';
export {
  resolveSubscriptionsOptions,
  type ResolvedSubscriptionsOptions,
} from './subscriptions-options.js';
export { SUBSCRIPTIONS_MIGRATIONS } from './migrations/index.js';
export type { ConsumerCommand } from './directory/consumer-requests.js';
export { renderClaimed } from './groups/sql/group-claim.sql.js';
export { PacedRun } from './runner/paced-run.js';
