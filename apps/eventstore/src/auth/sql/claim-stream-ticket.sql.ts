import type { SqlQuery } from '@ordinal/pg';
import { STREAM_TICKET_NONCES_TABLE as STREAM_TICKET_NONCES } from '@ordinal/log';

/**
 * Claims a ticket's nonce: returns a row when this call recorded it, none when some process
 * already had (the primary key makes concurrent claims of one nonce end with one winner).
 * `expiresAtMs` is the ticket's own expiry (epoch ms), after which the row may be deleted.
 */
export function claimStreamTicket(nonce: string, expiresAtMs: number): SqlQuery {
  return {
    text: `INSERT INTO ${STREAM_TICKET_NONCES} (nonce, expires_at)
           VALUES ($1, to_timestamp($2::double precision / 1000))
           ON CONFLICT (nonce) DO NOTHING
           RETURNING nonce`,
    values: [nonce, expiresAtMs],
  };
}

/**
 * Deletes the nonces of tickets that expired before `beforeMs` (epoch ms): an expired ticket
 * is refused on its expiry alone, so its nonce need not be kept. Runs on the expiry index.
 */
export function purgeStreamTickets(beforeMs: number): SqlQuery {
  return {
    text: `DELETE FROM ${STREAM_TICKET_NONCES}
           WHERE expires_at < to_timestamp($1::double precision / 1000)`,
    values: [beforeMs],
  };
}
