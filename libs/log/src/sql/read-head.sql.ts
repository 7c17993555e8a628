import { TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/** The highest committed index (0 on an empty log): the log_head row, moved by every flush. */
export function readHead(): SqlQuery {
  return {
    text: `SELECT position::text AS head FROM ${TABLES.logHead} WHERE id = 1`,
    values: [],
  };
}
