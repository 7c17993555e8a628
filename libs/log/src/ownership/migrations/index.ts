import { CreateConsumerLeases1765300000000 } from './1765300000000-create-consumer-leases.js';

/** Consumer ownership's migrations, in order (run by ConsumerOwnership at start). */
export const OWNERSHIP_MIGRATIONS = [CreateConsumerLeases1765300000000];
