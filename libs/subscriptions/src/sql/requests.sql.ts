import type { SqlQuery } from '@ordinal/pg';
import { SUBSCRIPTION_TABLES } from '../subscriptions.constants.js';

const T = SUBSCRIPTION_TABLES.requests;

/** A request for the owner of a consumer. */
export interface RequestRow {
  id: string;
  consumer: string;
  command: string;
  done_at: Date | null;
  result: unknown;
  error: string | null;
}

/** Asks whichever process owns `consumer` to run `command`. */
export function insertRequest(consumer: string, command: string): SqlQuery {
  return {
    text: `INSERT INTO ${T} (consumer, command) VALUES ($1, $2) RETURNING id::text AS id`,
    values: [consumer, command],
  };
}

/** Requests not done yet for the consumers a process owns, oldest first. */
export function pendingRequests(consumers: string[]): SqlQuery {
  return {
    text: `SELECT id::text AS id, consumer, command, done_at, result, error FROM ${T}
            WHERE done_at IS NULL AND consumer = ANY($1::text[]) ORDER BY id`,
    values: [consumers],
  };
}

/** Records a request's outcome. */
export function completeRequest(id: string, result: unknown, error: string | null): SqlQuery {
  return {
    text: `UPDATE ${T} SET done_at = now(), result = $2, error = $3 WHERE id = $1 AND done_at IS NULL`,
    values: [id, JSON.stringify(result ?? null), error],
  };
}

/** One request (the requester polls it). */
export function readRequest(id: string): SqlQuery {
  return {
    text: `SELECT id::text AS id, consumer, command, done_at, result, error FROM ${T} WHERE id = $1`,
    values: [id],
  };
}
