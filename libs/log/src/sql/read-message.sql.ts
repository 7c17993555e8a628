import { MESSAGE_READ_COLUMNS } from '../row-mapper.js';
import { TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/** One message by its global index. */
export function readMessage(index: number): SqlQuery {
  return {
    text: `SELECT ${MESSAGE_READ_COLUMNS} FROM ${TABLES.messages} WHERE index = $1`,
    values: [index],
  };
}
