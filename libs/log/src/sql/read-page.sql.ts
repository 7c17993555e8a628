import { MESSAGE_COLUMNS } from '../row-mapper.js';
import { TABLES } from '../log.constants.js';
import type { SqlQuery } from './sql-query.js';

/** Filter of a log read. Empty or absent lists mean "everything". */
export interface ReadFilter {
  types?: string[];
}

/** Messages with `from <= index <= to`, in index order, at most `limit` of them. */
export function readPage(from: number, to: number, limit: number, filter: ReadFilter = {}): SqlQuery {
  const types = filter.types ?? [];
  if (types.length === 0) {
    return {
      text: `SELECT ${MESSAGE_COLUMNS} FROM ${TABLES.messages}
             WHERE index >= $1 AND index <= $2 ORDER BY index LIMIT $3`,
      values: [from, to, limit],
    };
  }
  return {
    text: `SELECT ${MESSAGE_COLUMNS} FROM ${TABLES.messages}
           WHERE index >= $1 AND index <= $2 AND message_type = ANY($4::text[])
           ORDER BY index LIMIT $3`,
    values: [from, to, limit, types],
  };
}
