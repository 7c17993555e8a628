/** Table names live in one place; identifiers never come from input. */
export const TABLES = {
  messages: 'messages',
  logHead: 'log_head',
  streams: 'streams',
  skipped: 'log_skipped',
  watermark: 'log_watermark',
} as const;

/** Concurrent mode draws positions from this sequence (CACHE 1: values ascend across sessions). */
export const SEQUENCE = 'messages_index_seq';

/** Advisory lock keys (pg_advisory_xact_lock takes a bigint). */
export const LOCKS = {
  /** Serialises gapless flushes across every process on the database. */
  log: 0x4f5244_01,
} as const;

/** Channel of the NOTIFY sent with every commit; the payload is the new head index. */
export const LOG_CHANNEL = 'ordinal_log';

/** The message type and user of the marker written at every start. */
export const START_MARKER_TYPE = 'StartMarker';
export const SYSTEM_USER = 'system';
