import { MESSAGE_READ_COLUMNS } from '../row-mapper.js';
import { TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';
import { skipTombstones, type ReadFilter } from './read-page.sql.js';

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
  const types = filter.types ?? [];
  return {
    text: `SELECT ${MESSAGE_READ_COLUMNS} FROM ${TABLES.messages}
           WHERE correlation_id = $1 AND index >= $2 AND index <= $3 AND (cardinality($5::text[]) = 0 OR message_type = ANY($5::text[]))${skipTombstones(filter)}
           ORDER BY index LIMIT $4`,
    values: [correlationId, from, to, limit, types],
  };
}
