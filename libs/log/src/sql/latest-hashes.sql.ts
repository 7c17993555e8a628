import { TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/** Content hashes of the latest `count` messages (the duplicate window's memory, L7). */
export function latestHashes(count: number): SqlQuery {
  return {
    text: `SELECT content_hash FROM ${TABLES.messages} ORDER BY index DESC LIMIT $1`,
    values: [count],
  };
}
