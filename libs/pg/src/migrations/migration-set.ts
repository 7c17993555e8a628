import type { MigrationClass } from './run-migrations.js';

/**
 * Migrations a feature module contributes (`OrdinalModule.forFeature(…, { migrations })`): a
 * provider holding one is found at start and its migrations run with the log's, in the same
 * run under the migration lock.
 */
export class MigrationSet {
  constructor(readonly migrations: MigrationClass[]) {}
}
