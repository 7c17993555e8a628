/**
 * `@ordinal/log/internal`: for Ordinal's sibling libraries and server only (table and lock
 * names, the SQL executor, row mappers, option resolution). Not a public API: it changes
 * without notice.
 */
export { TABLES, SEQUENCE, LOCKS, LOG_CHANNEL } from './log.constants.js';
export { LOG_MODULE_OPTIONS, LOG_RAW_OPTIONS } from './log.module-definition.js';
export { resolveLogOptions, type ResolvedLogOptions } from './log-options.js';
export { DuplicateWindow } from './writer/duplicate-window.js';
export { isConnectionError, isDataError, isReadOnlyError } from './writer/pg-errors.js';
export type { Hole, HoleWriter, WatermarkCounters } from './watermark/hole.js';
export { compileFilter } from './router/feed-filter.js';
export * from './row-mapper.js';
export * from './content-hash.js';
export * from './jsonb-text.js';
export {
  JSON_LIMITS,
  jsonValueProblem,
  toStorableJson,
  jsonbKeyOrder,
  type JsonProblem,
  type StorableJson,
} from './writer/json-rules.js';
export { inexactNumberIn } from './writer/exact-numbers.js';
export {
  execute,
  readOpenSkipped,
  copyImportRows,
  importRowText,
  IMPORT_COLUMN_NAMES,
  type ImportRow,
  type SqlQuery,
  type SqlRunner,
  type ReadFilter,
} from './sql/index.js';
export { LateTracker } from './late/late-tracker.js';
export {
  runMigrations,
  type MigrationClass,
  type RunMigrationsOptions,
} from './schema/run-migrations.js';
export { LOG_MIGRATIONS } from './migrations/index.js';
export { MigrationSet } from './schema/migration-set.js';
export {
  ConsumerOwnership,
  Lease,
  ownershipTimings,
  planGroup,
  OWNERSHIP_TABLES,
  OWNERSHIP_MIGRATIONS,
  type OwnedConsumer,
  type OwnershipTimings,
  type ConsumerLeaseRow,
  type GroupPlan,
  type GroupView,
} from './ownership/index.js';
export { parseImportLine, MESSAGE_FIELD_RULES } from './import/import-line.js';
