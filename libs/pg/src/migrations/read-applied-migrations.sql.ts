import { MIGRATIONS_TABLE } from './migrations.constants.js';
import type { SqlQuery } from '../sql-query.js';

/** The names of the migrations applied to this database (a replica reader checks them at start). */
export function readAppliedMigrations(): SqlQuery {
  return { text: `SELECT name FROM ${MIGRATIONS_TABLE}`, values: [] };
}
