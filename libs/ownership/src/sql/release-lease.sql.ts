import type { SqlQuery } from '@ordinal/pg';
import { OWNERSHIP_TABLES } from '../ownership.constants.js';

/** Gives a lease up (after its consumer stopped), so a peer can claim it at once; `progress` is its consumer's last word. */
export function releaseLease(
  name: string,
  owner: string,
  epoch: number,
  progress: unknown = null,
): SqlQuery {
  return {
    text: `UPDATE ${OWNERSHIP_TABLES.leases}
              SET owner = NULL, expires_at = NULL,
                  progress = COALESCE($4::jsonb, progress),
                  progress_at = CASE WHEN $4::jsonb IS NULL THEN progress_at ELSE now() END
            WHERE name = $1 AND owner = $2 AND epoch = $3`,
    values: [
      name,
      owner,
      epoch,
      progress === null || progress === undefined ? null : JSON.stringify(progress),
    ],
  };
}

/** A process leaving: its row goes. */
export function removeProcess(owner: string): SqlQuery {
  return { text: `DELETE FROM ${OWNERSHIP_TABLES.processes} WHERE owner = $1`, values: [owner] };
}
