import { TABLES } from '../log.constants.js';
import type { SqlQuery } from './sql-query.js';

/** The highest committed index (0 on an empty log). */
export function readHead(): SqlQuery {
  return {
    text: `SELECT coalesce(max(index), 0)::text AS head FROM ${TABLES.messages}`,
    values: [],
  };
}
