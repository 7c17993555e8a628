import type { SqlQuery } from '@ordinal/pg';
import { SUBSCRIPTION_TABLES } from '../subscriptions.constants.js';

const T = SUBSCRIPTION_TABLES.parked;

/** A parked message as listed. */
export interface ParkedRow {
  consumer: string;
  position: string;
  message_type: string;
  error: string;
  attempts: number;
  parked_at: Date;
}

/** Parks a message (in the transaction that moves the checkpoint over it). */
export function parkMessage(
  consumer: string,
  position: number,
  messageType: string,
  error: string,
  attempts: number,
): SqlQuery {
  return {
    text: `INSERT INTO ${T} (consumer, position, message_type, error, attempts) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (consumer, position) DO UPDATE SET error = EXCLUDED.error, attempts = ${T}.attempts + EXCLUDED.attempts, parked_at = now()`,
    values: [consumer, position, messageType, error.slice(0, 4000), attempts],
  };
}

/** The parked messages of one consumer, oldest position first. */
export function listParked(consumer: string): SqlQuery {
  return {
    text: `SELECT consumer, position::text AS position, message_type, error, attempts, parked_at FROM ${T} WHERE consumer = $1 ORDER BY position`,
    values: [consumer],
  };
}

/** How many messages each consumer has parked. */
export function countParked(consumers: string[]): SqlQuery {
  return {
    text: `SELECT consumer, count(*)::int AS parked FROM ${T} WHERE consumer = ANY($1::text[]) GROUP BY consumer`,
    values: [consumers],
  };
}

/** A replayed message leaves (in the transaction that applied it). */
export function unparkMessage(consumer: string, position: number): SqlQuery {
  return {
    text: `DELETE FROM ${T} WHERE consumer = $1 AND position = $2`,
    values: [consumer, position],
  };
}

/** A replay failed again: the new error. */
export function replayFailed(consumer: string, position: number, error: string): SqlQuery {
  return {
    text: `UPDATE ${T} SET error = $3, attempts = attempts + 1 WHERE consumer = $1 AND position = $2`,
    values: [consumer, position, error.slice(0, 4000)],
  };
}
