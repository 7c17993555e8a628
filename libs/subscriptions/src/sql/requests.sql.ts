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
  /** The error's code when it was a typed Ordinal error (`OrdinalError.code`). */
  error_code: string | null;
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
    text: `SELECT id::text AS id, consumer, command, done_at, result, error, error_code FROM ${T}
            WHERE done_at IS NULL AND consumer = ANY($1::text[]) ORDER BY id`,
    values: [consumers],
  };
}

/** Records a request's outcome: its result, or its error's message and code (null for an untyped error). */
export function completeRequest(
  id: string,
  result: unknown,
  error: { message: string; code: string | null } | null,
): SqlQuery {
  return {
    text: `UPDATE ${T} SET done_at = now(), result = $2, error = $3, error_code = $4
            WHERE id = $1 AND done_at IS NULL`,
    values: [id, JSON.stringify(result ?? null), error?.message ?? null, error?.code ?? null],
  };
}

/** One request (the requester polls it). */
export function readRequest(id: string): SqlQuery {
  return {
    text: `SELECT id::text AS id, consumer, command, done_at, result, error, error_code FROM ${T} WHERE id = $1`,
    values: [id],
  };
}
