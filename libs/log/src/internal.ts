/**
 * `@ordinal/log/internal`: for Ordinal's sibling libraries and server only (table and lock
 * names, row mappers, option resolution; the SQL executor is @ordinal/pg's). Not a public API: it changes
 * without notice.
 */
export { TABLES, SEQUENCE, LOCKS, LOG_CHANNEL } from './log.constants.js';
export { LOG_MODULE_OPTIONS, LOG_RAW_OPTIONS } from './log.module-definition.js';
export { resolveLogOptions, type ResolvedLogOptions } from './log-options.js';
export { DuplicateWindow } from './writer/duplicate-window.js';
export type { Hole, HoleWriter, WatermarkCounters } from './watermark/hole.js';
export { compileFilter } from './router/feed-filter.js';
export * from './row-mapper.js';
export * from './content-hash.js';
export {
  appendBatch,
  type InsertColumns,
  readOpenSkipped,
  latestHashes,
  readSkippedBetween,
  RENDERED_MESSAGE_JSON,
  RENDERED_ROW_JSON,
  hiddenReason,
  copyImportRows,
  importRowText,
  IMPORT_COLUMN_NAMES,
  type ImportRow,
  type ReadFilter,
} from './sql/index.js';
export { LateTracker } from './late/late-tracker.js';
export { LOG_MIGRATIONS } from './migrations/index.js';
export { parseImportLine, MESSAGE_FIELD_RULES } from './import/import-line.js';
export { addSegment } from './segments/segments.sql.js';
export { atPositions } from './sql/at-positions.sql.js';
export { segmentTable } from './segments/segment-range.js';
export {
  readFrom,
  hotSource,
  archivedSource,
  streamSource,
  isArchivedRange,
  ARCHIVED_RANGE,
  type ReadSource,
} from './archive/read-source.js';
