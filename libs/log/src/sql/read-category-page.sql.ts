import { MESSAGE_READ_COLUMNS } from '../row-mapper.js';
import { TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/**
 * Messages of one stream category with `index >= from`, in index order. No upper bound:
 * the per-category lock of concurrent mode makes a category's positions commit in order, so a
 * category read never sees a gap that could still fill.
 */
export function readCategoryPage(category: string, from: number, limit: number): SqlQuery {
  return {
    text: `SELECT ${MESSAGE_READ_COLUMNS} FROM ${TABLES.messages}
           WHERE category = $1 AND index >= $2 ORDER BY index LIMIT $3`,
    values: [category, from, limit],
  };
}
