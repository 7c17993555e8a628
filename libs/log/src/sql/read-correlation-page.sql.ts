import { MESSAGE_READ_COLUMNS } from '../row-mapper.js';
import { TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';
import { filterClause, type ReadFilter } from './read-page.sql.js';

/**
 * One correlation's messages with `from <= index <= to`, in index order, at most `limit`: a
 * range scan of `messages_correlation_ix (correlation_id, index)`.
 */
export function readCorrelationPage(
  correlationId: string,
  from: number,
  to: number,
  limit: number,
  filter: ReadFilter = {},
): SqlQuery {
  const values: unknown[] = [correlationId, from, to, limit];
  const clause = filterClause(filter, values);
  return {
    text: `SELECT ${MESSAGE_READ_COLUMNS} FROM ${TABLES.messages}
           WHERE correlation_id = $1 AND index >= $2 AND index <= $3${clause}
           ORDER BY index LIMIT $4`,
    values,
  };
}
