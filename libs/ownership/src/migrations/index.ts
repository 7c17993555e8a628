import { CreateConsumerLeases1765300000000 } from './1765300000000-create-consumer-leases.js';
import { ConsumerLeaseProgress1765300000001 } from './1765300000001-consumer-lease-progress.js';
import { ProcessesHotHeartbeats1765300000002 } from './1765300000002-processes-hot-heartbeats.js';
import { OwnershipSchemaComments1765300000003 } from './1765300000003-schema-comments.js';

/** Consumer ownership's migrations, in order (run with the log's by LogLifecycle at start). */
export const OWNERSHIP_MIGRATIONS = [
  CreateConsumerLeases1765300000000,
  ConsumerLeaseProgress1765300000001,
  ProcessesHotHeartbeats1765300000002,
  OwnershipSchemaComments1765300000003,
];
