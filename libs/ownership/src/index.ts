export * from './consumer-ownership.service.js';
export * from './lease.js';
export type { OwnedConsumer } from './owned-consumer.js';
export * from './ownership-options.js';
export { planGroup, type GroupPlan, type GroupView } from './ownership-plan.js';
export { OWNERSHIP_TABLES } from './ownership.constants.js';
export { OWNERSHIP_MIGRATIONS } from './migrations/index.js';
export type { ConsumerLeaseRow } from './sql/read-ownership.sql.js';
export * from './ownership-lost.error.js';
