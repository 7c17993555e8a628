import type { SqlQuery } from '@ordinal/pg';
import { OWNERSHIP_TABLES } from '../ownership.constants.js';

/** Creates the lease rows of a group's consumers (unowned) when they do not exist yet. */
export function registerConsumers(names: string[], kind: string, group: string): SqlQuery {
  return {
    text: `INSERT INTO ${OWNERSHIP_TABLES.leases} (name, kind, group_name)
           SELECT unnest($1::text[]), $2, $3 ON CONFLICT (name) DO NOTHING`,
    values: [names, kind, group],
  };
}
