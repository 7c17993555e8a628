import { LOCKS } from '../log.constants.js';
import type { SqlQuery } from './sql-query.js';

/** Takes the global log lock for this transaction (gapless mode, L3); returns the commit time. */
export function lockLog(): SqlQuery {
  return {
    text: 'SELECT pg_advisory_xact_lock($1::bigint), now() AS now',
    values: [LOCKS.log],
  };
}
