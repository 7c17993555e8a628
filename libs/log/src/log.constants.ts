/** Table names live in one place; identifiers never come from input. */
export const TABLES = {
  messages: 'messages',
  logHead: 'log_head',
  streams: 'streams',
  skipped: 'log_skipped',
  watermark: 'log_watermark',
  /** Used stream-ticket nonces of the Ordinal server (single-use tickets across processes). */
  streamTicketNonces: 'stream_ticket_nonces',
  streamStates: 'stream_states',
  categoryRules: 'category_rules',
  scavengeRuns: 'scavenge_runs',
  /** Personal-data rules managed over REST and from the rules file (docs/personal-data.md). */
  personalDataRules: 'personal_data_rules',
  /** Every erasure of a subject's personal data: reapplied at start (docs/personal-data.md). */
  erasureLedger: 'erasure_ledger',
  /** Every idempotency key and its message's index: the key's uniqueness across segments. */
  messageKeys: 'message_keys',
  /** The log's segments (partitions of messages by index range) and their tier (docs/storage.md). */
  segments: 'log_segments',
  /** The segment size, one row. */
  segmentSettings: 'log_segment_settings',
  /** Which chunks of archived segments hold rows of a stream. */
  archivedStreamChunks: 'archived_stream_chunks',
  /** Deleted tenants (docs/tenants.md): their rows read as tombstones, their appends are refused. */
  deletedTenants: 'deleted_tenants',
} as const;

/** The message type of the marker a tenant's deletion appends. */
export const TENANT_DELETED_TYPE = '$tenant-deleted';

/** The message type of the marker an erasure appends. */
export const SUBJECT_ERASED_TYPE = '$subject-erased';

/** Concurrent mode draws positions from this sequence (CACHE 1: values ascend across sessions). */
export const SEQUENCE = 'messages_index_seq';

/**
 * The highest position any watermark has passed (moved before the position is recorded). A row
 * inserted at or below it is checked by the `messages_index_passed` trigger: refused unless
 * its position is still watched for a late row.
 */
export const PASSED_SEQUENCE = 'log_passed_position';

/** Advisory lock keys (pg_advisory_xact_lock takes a bigint). */
export const LOCKS = {
  /** Serialises gapless flushes across every process on the database. */
  log: 0x4f5244_01,
  /** Serialises moves of `PASSED_SEQUENCE` (read, then set: never back). */
  passed: 0x4f5244_03,
  /** Held (session-level) by the one scavenge running across every process on the database. */
  scavenge: 0x4f5244_05,
  /** Held (session-level) by the one redaction of legacy personal data running on the database. */
  redact: 0x4f5244_06,
  /** Serialises changes to the segments (creating them ahead of the head) across processes. */
  segments: 0x4f5244_07,
  /** Held (session-level) by the one archive, restore or verify of segments running on the database. */
  archive: 0x4f5244_08,
} as const;

/**
 * Channel of the NOTIFY sent with every commit; the payload is the new head index, or
 * `LIFECYCLE_NOTICE` when a stream's state or retention (or a category's) changed.
 */
export const LOG_CHANNEL = 'ordinal_log';

/**
 * The payload a trigger on `stream_states` and `category_rules` sends on `LOG_CHANNEL` when a
 * transaction changes them (a delete, metadata, a category rule), whichever process wrote it:
 * live routers drop the catch-up pages they keep, read before messages were hidden.
 */
export const LIFECYCLE_NOTICE = 'lifecycle';

/** The message type and user of the marker written at every start. */
export const START_MARKER_TYPE = 'StartMarker';
export const SYSTEM_USER = 'system';

/** The table of used stream-ticket nonces (the log's migrations create it; the server claims them). */
export const STREAM_TICKET_NONCES_TABLE = TABLES.streamTicketNonces;
