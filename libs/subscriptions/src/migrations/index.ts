import { CreateCheckpoints1765200000000 } from './1765200000000-create-checkpoints.js';
import { CreateParkedMessages1765200000001 } from './1765200000001-create-parked-messages.js';
import { ConsumerDirectory1765200000002 } from './1765200000002-consumer-directory.js';

/** This library's migrations, in order. */
export const SUBSCRIPTIONS_MIGRATIONS = [
  CreateCheckpoints1765200000000,
  CreateParkedMessages1765200000001,
  ConsumerDirectory1765200000002,
];
