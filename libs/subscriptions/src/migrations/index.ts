import { CreateCheckpoints1765200000000 } from './1765200000000-create-checkpoints.js';

/** This library's migrations, in order. */
export const SUBSCRIPTIONS_MIGRATIONS = [CreateCheckpoints1765200000000];
