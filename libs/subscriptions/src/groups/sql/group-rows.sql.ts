import type { SqlQuery } from '@ordinal/pg';
import { GROUP_TABLES } from '../group-tables.js';

const G = GROUP_TABLES.groups;

/** A group's row. */
export interface GroupRow {
  name: string;
  definition: unknown;
  checkpoint: string;
  read_to: string;
  created_at: Date;
  updated_at: Date;
}

/** Creates a group unless it exists; returns the row only when it was created. */
export function insertGroup(name: string, definition: unknown, start: number): SqlQuery {
  return {
    text: `INSERT INTO ${G} (name, definition, checkpoint, read_to) VALUES ($1, $2::jsonb, $3, $3)
           ON CONFLICT (name) DO NOTHING RETURNING name`,
    values: [name, JSON.stringify(definition), start],
  };
}

/**
 * Locks a group's row for the rest of the transaction: every change to a group (claims, acks,
 * sweeps, replays) takes this lock first, so the group's rows change one transaction at a time
 * across every server process, and always in the same order (group, then its rows).
 */
export function lockGroup(name: string): SqlQuery {
  return {
    text: `SELECT name, definition, checkpoint::text AS checkpoint, read_to::text AS read_to, created_at, updated_at
           FROM ${G} WHERE name = $1 FOR UPDATE`,
    values: [name],
  };
}

/** One group or every group, unlocked (status). */
export function readGroups(name: string | null): SqlQuery {
  return {
    text: `SELECT name, definition, checkpoint::text AS checkpoint, read_to::text AS read_to, created_at, updated_at
           FROM ${G} WHERE $1::text IS NULL OR name = $1 ORDER BY name`,
    values: [name],
  };
}

export function updateDefinition(name: string, definition: unknown): SqlQuery {
  return {
    text: `UPDATE ${G} SET definition = $2::jsonb, updated_at = now() WHERE name = $1`,
    values: [name, JSON.stringify(definition)],
  };
}

export function deleteGroup(name: string): SqlQuery {
  return { text: `DELETE FROM ${G} WHERE name = $1 RETURNING name`, values: [name] };
}

/**
 * Moves the checkpoint to just below the lowest event above it not yet done (or to `read_to`
 * when none is left), never back. Late arrivals and replayed parked events below the
 * checkpoint do not hold it: it had already counted their positions as done. The rule is
 * `ordinal_group_advance` (a migration), which the ack runs too.
 */
export function advanceCheckpoint(name: string): SqlQuery {
  return {
    text: `SELECT ordinal_group_advance($1)::text AS checkpoint`,
    values: [name],
  };
}
