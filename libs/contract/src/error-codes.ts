/**
 * Every `code` an `OrdinalError` can carry, defined once. `OrdinalError` accepts only these, the
 * server maps each to an HTTP status in one exhaustive table, and `docs/errors.md` documents
 * each (a spec checks the three agree). Codes are stable: a client may switch on them.
 */
export const ORDINAL_ERROR_CODES = [
  // @ordinal/pg
  'database_unavailable',
  'storage_full',
  'read_only_replica',
  'migration_failed',
  // @ordinal/log
  'invalid_message',
  'idempotency_key_reused',
  'version_conflict',
  'writer_overloaded',
  'writer_closed',
  'append_failed',
  'import_failed',
  'log_full',
  'import_idle_timeout',
  'subject_erased',
  'invalid_personal_data_rule',
  'master_key_mismatch',
  'no_personal_data_rule',
  'redact_running',
  'index_archived',
  'archive_corrupt',
  'archive_not_configured',
  'segment_not_found',
  'segment_not_archivable',
  'segment_busy',
  'tenant_deleted',
  'invalid_tenant',
  // @ordinal/ownership (and the module options)
  'ownership_lost',
  'invalid_configuration',
  // @ordinal/event-sourcing
  'invalid_stream_id',
  'invalid_version',
  'aggregate_not_found',
  'snapshot_version_exceeds_stream',
  'invalid_aggregate',
  'unknown_event_type',
  'invalid_upcaster',
  'missing_upcaster',
  'stream_not_found',
  'stream_deleted',
  'stream_tombstoned',
  'scavenge_running',
  // @ordinal/subscriptions
  'subscription_not_found',
  'duplicate_subscription',
  'consumer_not_running',
  'consumer_request_failed',
  'wait_timeout',
  'checkpoint_moved',
  'handler_failed',
  // @ordinal/subscriptions: consumer groups
  'consumer_group_not_found',
  'consumer_group_conflict',
  'invalid_consumer_group',
  'member_lease_lost',
  // @ordinal/projections
  'invalid_projection',
  'projection_version_not_found',
  'projection_version_conflict',
  // @ordinal/amqp
  'amqp_unavailable',
  'interface_config',
  'queue_mismatch',
  // @ordinal/nestjs
  'embedded_postgres_unavailable',
] as const;

/** The stable, machine-readable code of an Ordinal error (`error.code`, and `code` in an HTTP error body). */
export type OrdinalErrorCode = (typeof ORDINAL_ERROR_CODES)[number];

/**
 * The codes of answers the server gives before any library sees the request (the body parser,
 * the query, the router). No `OrdinalError` carries them; an HTTP error body's `code` is an
 * `ErrorCode`: one of these or an `OrdinalErrorCode`.
 */
export const HTTP_ERROR_CODES = [
  'empty_body',
  'invalid_utf8',
  'invalid_json',
  'unknown_field',
  'repeated_parameter',
  'invalid_parameter',
  'method_not_allowed',
  'body_timeout',
  'unsupported_media_type',
  'invalid_stream_ticket',
  'invalid_token',
  'missing_scope',
  'access_denied',
  'tenant_forbidden',
] as const;

/** A code of the HTTP layer (see `HTTP_ERROR_CODES`). */
export type HttpErrorCode = (typeof HTTP_ERROR_CODES)[number];

/** Every `code` an HTTP error body can carry. */
export type ErrorCode = OrdinalErrorCode | HttpErrorCode;
