import type { SqlQuery } from '@ordinal/log/internal';
import { AMQP_TABLES } from '../amqp.constants.js';

/** Every saved bookmark with when it last moved. */
export function readBookmarks(): SqlQuery {
  return { text: `SELECT name, position::text AS position, updated_at FROM ${AMQP_TABLES.bookmarks} ORDER BY name`, values: [] };
}
