import { MESSAGE_READ_COLUMNS } from '../row-mapper.js';
import { TABLES } from '../log.constants.js';
import { MAX_POSITION, type SqlQuery } from '@ordinal/pg';

/**
 * Messages of one stream category with `from <= index <= to`, in index order. `to` is only the
 * end of a stretch of hot segments (the reader reads archived ones from the archive store), not
 * the safe head: the per-category lock of concurrent mode makes a category's positions commit in order, so a
 * category read never sees a gap that could still fill.
 */
export function readCategoryPage(
  category: string,
  from: number,
  limit: number,
  to: number = MAX_POSITION,
): SqlQuery {
  return {
    text: `SELECT ${MESSAGE_READ_COLUMNS} FROM ${TABLES.messages}
           WHERE category = $1 AND index >= $2 AND index <= $4 ORDER BY index LIMIT $3`,
    values: [category, from, limit, to],
  };
}
