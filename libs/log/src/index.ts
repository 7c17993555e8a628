// The public door of @ordinal/log. What only sibling libraries use is in ./internal.ts.
export * from './errors/index.js';
// The errors every library shares are defined in @ordinal/pg and @ordinal/ownership; the log's
// public door keeps naming them, so `import { OrdinalError } from '@ordinal/log'` goes on working.
export {
  OrdinalError,
  DatabaseUnavailableError,
  MigrationFailedError,
  ReadOnlyReplicaError,
} from '@ordinal/pg';
export { OwnershipLostError } from '@ordinal/ownership';
export * from './message.js';
// The wire shapes the log's API returns are the contract's.
export type {
  ImportResult,
  OrdinalMessage,
  OrdinalRecord,
  OrdinalTombstone,
  TombstoneReason,
} from '@ordinal/contract';
export { toOrdinalMessage, toOrdinalRecord } from './ordinal-message.js';
export type { LogModuleOptions, LogRole, Ordering } from './log-options.js';
export { START_MARKER_TYPE, SYSTEM_USER, STREAM_TICKET_NONCES_TABLE } from './log.constants.js';
export * from './log.module.js';
export * from './writer/log-writer.service.js';
export * from './import/log-importer.service.js';
export * from './scavenge/log-scavenger.service.js';
export * from './reader/log-reader.service.js';
export * from './reader/tenant-sessions.js';
export * from './tenant.js';
export * from './tenants/tenant-deletion.service.js';
export * from './watermark/log-watermark.service.js';
export type { WatermarkStatus } from './watermark/watermark-status.js';
export * from './router/log-feed.js';
export * from './router/live-router.service.js';
export * from './log-lifecycle.service.js';
export { SegmentKeeper } from './segments/segment-keeper.service.js';
export type { SegmentInfo } from '@ordinal/contract';
export { DEFAULT_SEGMENT_SIZE, MIN_SEGMENT_SIZE } from './segments/segment-range.js';
export { SegmentArchiver, type SegmentVerification } from './archive/segment-archiver.service.js';
export { ArchivedSegments } from './archive/archived-segments.service.js';
export {
  FilesystemArchiveStore,
  checkObjectName,
  type ArchiveStore,
} from './archive/archive-store.js';
export type { SegmentManifest, ArchiveChunk } from './archive/archive-format.js';
export type { ArchiveOptions } from './log-options.js';
export { murmur3_32, shardOf } from '@ordinal/contract';
export { RenderedMessage, renderedJson } from './row-mapper.js';
export * from './trace/index.js';
export * from './access/index.js';
export * from './personal/index.js';
export type { PersonalDataOptions } from './log-options.js';
export { SUBJECT_ERASED_TYPE, TENANT_DELETED_TYPE } from './log.constants.js';
