import { TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/**
 * The highest index any committed row has (0 on an empty log), in either ordering: in
 * concurrent mode it runs ahead of the low watermark while a hole is held below it. One
 * backward step of the primary key's index.
 */
export function readCommittedHead(): SqlQuery {
  return {
    text: `SELECT coalesce(max(index), 0)::text AS head FROM ${TABLES.messages}`,
    values: [],
  };
}
