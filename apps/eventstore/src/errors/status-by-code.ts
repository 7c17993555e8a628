import type { HttpErrorCode, OrdinalErrorCode } from '@ordinal/contract';

/**
 * The HTTP status of every library error code, exhaustive: a code added to
 * `ORDINAL_ERROR_CODES` does not compile until it has a status here (and a row in
 * `docs/errors.md`, which a spec checks). Clients rely on these; change one only as a breaking
 * change. 503s carry `Retry-After`; 500s are logged.
 */
export const STATUS_BY_CODE: Record<OrdinalErrorCode, number> = {
  database_unavailable: 503,
  // Out of disk: retry once space is freed (Retry-After); /health says so meanwhile.
  storage_full: 503,
  writer_overloaded: 503,
  writer_closed: 503,
  invalid_message: 400,
  idempotency_key_reused: 422,
  // The message names a subject whose personal data was erased (docs/personal-data.md).
  subject_erased: 422,
  invalid_personal_data_rule: 400,
  // The master key cannot unwrap the key store's keys: a configuration fault, logged.
  master_key_mismatch: 500,
  // A redaction of legacy data for a type without a rule (docs/personal-data.md).
  no_personal_data_rule: 404,
  // Another redaction holds the job's lock (in this process or another).
  redact_running: 409,
  version_conflict: 409,
  // A read with `tiers=hot` reached an archived segment: read without it (slower) or restore.
  index_archived: 409,
  // An archive file does not match its manifest's checksum: an operator restores the file, so a
  // retry can succeed later (docs/storage.md).
  archive_corrupt: 503,
  // No archive store (ORDINAL_ARCHIVE_DIR) is configured.
  archive_not_configured: 409,
  segment_not_found: 404,
  // Not sealed yet (the head or the watermark is within it, positions in it are watched for late
  // rows, or it is younger than the archive age), or already in the asked tier.
  segment_not_archivable: 409,
  // Another archive, restore or verify of the segment is running (in this process or another).
  segment_busy: 409,
  // The tenant was deleted (docs/tenants.md#deleting-a-tenant): gone for good, its appends are refused.
  tenant_deleted: 410,
  // A tenant id outside 1-63 letters, digits, '_' and '.' (docs/tenants.md): in `Ordinal-Tenant`
  // or a path's tenant, or the header is repeated.
  invalid_tenant: 400,
  snapshot_version_exceeds_stream: 409,
  invalid_stream_id: 400,
  invalid_version: 400,
  aggregate_not_found: 404,
  stream_not_found: 404,
  // Soft-deleted: reads and loads find nothing (the body names the last version); an append
  // with `no_stream` or `any` re-creates the stream.
  stream_deleted: 404,
  // Tombstoned: gone for good, every call on it answers this forever.
  stream_tombstoned: 410,
  // Another scavenge holds the job's lock (in this process or another): look at its progress.
  scavenge_running: 409,
  subscription_not_found: 404,
  projection_version_not_found: 404,
  // A promotion that lost its race, a rollback without a previous version, retiring the serving one.
  projection_version_conflict: 409,
  consumer_group_not_found: 404,
  // A definition that would change what an existing group reads: delete it first.
  consumer_group_conflict: 409,
  invalid_consumer_group: 400,
  // The member was declared dead and its events went to others: it fetches again for a new lease.
  member_lease_lost: 409,
  consumer_not_running: 409,
  consumer_request_failed: 503,
  // The log has used every position up to 2^53 − 1 (the last index JSON readers read exactly).
  // 507 Insufficient Storage, not 503: the server cannot store the message, and that lasts
  // until an operator moves writers to a new log, so no Retry-After and no retry (the client
  // does not retry a 507, and 503 would make every producer retry for ever).
  log_full: 507,
  // A replica reader (or a primary whose database turned out to be a standby): send the write elsewhere.
  read_only_replica: 421,
  amqp_unavailable: 503,
  // The consumer has not reached the index yet, or its owner did not answer in time: the same
  // request may succeed later, so a 503 to retry, not a 500 (nor a 504: no gateway timed out).
  wait_timeout: 503,
  // The lease moved to another process mid-request; a retry reaches the new owner.
  ownership_lost: 503,
  // A rebuild or another instance moved the checkpoint under the batch: a conflict with the
  // consumer's current state, as a version conflict is; look at its state before retrying.
  checkpoint_moved: 409,
  // The service's own code or configuration is wrong (a handler threw, a class lacks its
  // decorator, stored events no code can read, a malformed option, a queue declared otherwise
  // on the broker, a failed migration): the client can do nothing about it and a retry gives
  // the same answer until an operator acts, so a 500 that the filter logs.
  handler_failed: 500,
  invalid_aggregate: 500,
  invalid_upcaster: 500,
  invalid_projection: 500,
  duplicate_subscription: 500,
  unknown_event_type: 500,
  missing_upcaster: 500,
  invalid_configuration: 500,
  interface_config: 500,
  queue_mismatch: 500,
  migration_failed: 500,
  embedded_postgres_unavailable: 500,
  // The database failed in a way none of the codes above describe: unexpected, so ours to look at.
  append_failed: 500,
  import_failed: 500,
  // The client paused its import's body for longer than the idle timeout: as a body timeout.
  import_idle_timeout: 408,
};

/** The status of every code of the HTTP layer, exhaustive; the places that answer them read it here. */
export const HTTP_STATUS_BY_CODE: Record<HttpErrorCode, number> = {
  empty_body: 400,
  invalid_utf8: 400,
  invalid_json: 400,
  unknown_field: 400,
  repeated_parameter: 400,
  // A query, path (or the stream's Last-Event-ID) parameter that is malformed or out of range;
  // `parameter` names it.
  invalid_parameter: 400,
  method_not_allowed: 405,
  body_timeout: 408,
  unsupported_media_type: 415,
  invalid_stream_ticket: 401,
  // No, an unknown, or a refused bearer token; `reason` says which check failed (docs/security.md).
  invalid_token: 401,
  // The principal is known but lacks the route's scope.
  missing_scope: 403,
  // An access rule does not let the principal read or write this (`denied` names the message).
  access_denied: 403,
  // The principal may not act for the tenant it named (docs/tenants.md), or a principal bound to
  // a tenant used a route that is not per tenant.
  tenant_forbidden: 403,
};
