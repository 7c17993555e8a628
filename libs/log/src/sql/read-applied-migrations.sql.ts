import { TABLES } from '../log.constants.js';
import type { SqlQuery } from './sql-query.js';

/** The names of the migrations applied to this database (a replica reader checks them at start). */
export function readAppliedMigrations(): SqlQuery {
  return { text: `SELECT name FROM ${TABLES.migrations}`, values: [] };
}
