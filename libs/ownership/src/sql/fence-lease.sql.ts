import type { SqlQuery } from '@ordinal/pg';
import { OWNERSHIP_TABLES } from '../ownership.constants.js';

/**
 * The fence, run inside a batch's transaction just before its checkpoint moves: a row only
 * while the lease still carries this owner and epoch and has not expired by the database's
 * clock (`clock_timestamp()`, not the transaction's start). `FOR SHARE` holds the row until
 * commit, so a peer cannot claim it between this check and the commit. The transaction's
 * idle-in-transaction timeout drops to `idleTimeoutMs` from here: a process frozen between the
 * fence and its commit is disconnected (its batch rolls back) instead of holding the row.
 */
export function fenceLease(
  name: string,
  owner: string,
  epoch: number,
  idleTimeoutMs: number,
): SqlQuery {
  return {
    text: `SELECT set_config('idle_in_transaction_session_timeout', $4, true) AS fenced
             FROM ${OWNERSHIP_TABLES.leases}
            WHERE name = $1 AND owner = $2 AND epoch = $3 AND expires_at > clock_timestamp()
              FOR SHARE`,
    values: [name, owner, epoch, String(idleTimeoutMs)],
  };
}
