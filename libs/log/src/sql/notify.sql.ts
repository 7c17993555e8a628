import type { SqlQuery } from '@ordinal/pg';
import { LOG_CHANNEL } from '../log.constants.js';

/** `NOTIFY ordinal_log, <payload>`, delivered at the commit of the statement's transaction. */
export function notifyLog(payload: string): SqlQuery {
  return { text: `SELECT pg_notify('${LOG_CHANNEL}', $1::text)`, values: [payload] };
}
