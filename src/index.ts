/**
 * @ordinal/nestjs: Ordinal in your NestJS service, from one import. The module, aggregates,
 * upcasters, projections, subscriptions and their errors. The server's wiring (controllers,
 * auth) is not here; the testing kit is `@ordinal/nestjs/testing`.
 */
export { OrdinalModule, type OrdinalFeatureOptions } from './ordinal.module.js';
export { ORDINAL_OPTIONS } from './ordinal.module-definition.js';
export { ordinalMigrations } from './ordinal-migrations.js';
export {
  type OrdinalModuleOptions,
  type OrdinalModuleExtras,
  type OrdinalTypeOrmOptions,
  type ResolvedOrdinalOptions,
} from './ordinal-options.js';

// Aggregates and events
export {
  Aggregate,
  AggregateRoot,
  AggregateRepository,
  InjectAggregateRepository,
  aggregateRepositoryToken,
  DomainEvent,
  Event,
  Upcaster,
  UpcasterRegistry,
  eventMetadataOf,
  retryOnConflict,
  isValidStreamId,
  StreamStore,
  StreamMetadataStore,
  StreamDeletedError,
  StreamTombstonedError,
  StreamNotFoundError,
  AggregateNotFoundError,
  InvalidAggregateError,
  InvalidStreamIdError,
  InvalidUpcasterError,
  InvalidVersionError,
  MissingUpcasterError,
  SnapshotVersionExceedsStreamError,
  UnknownEventTypeError,
  type AggregateClass,
  type AggregateOptions,
  type DomainEventOptions,
  type EventClass,
  type EventUpcaster,
  type UpcasterDefinition,
  type RetryOptions,
  type SaveOptions,
  type SaveResult,
  type RecordedEvent,
  type Snapshot,
  type StreamMetadata,
  type StoredStreamMetadata,
  type DeleteStreamOptions,
  type DeletedStream,
  type StreamStatus,
} from '@ordinal/event-sourcing';

// Projections and subscriptions
export {
  Projection,
  EventHandler,
  ProjectionsService,
  InvalidProjectionError,
  ProjectionVersionConflictError,
  ProjectionVersionNotFoundError,
  type ProjectionRead,
  type ProjectionVersionStatus,
  type RebuildOptions,
  type ProjectionContext,
  type ProjectionOptions,
  type ProjectionRef,
  type HandledEvent,
  TOMBSTONE_ROUTE,
  type TombstoneEvent,
  type PartitionKey,
} from '@ordinal/projections';
export {
  SubscriptionsService,
  ConsumersHealthIndicator,
  WaitTimeoutError,
  SubscriptionNotFoundError,
  DuplicateSubscriptionError,
  HandlerFailedError,
  CheckpointMovedError,
  ConsumerNotRunningError,
  ConsumerRequestFailedError,
  ConsumerOwnerError,
  type SubscribeOptions,
  type MessageContext,
  type MessageHandler,
  type SubscriptionStream,
  type SubscriptionStatus,
  type SubscriptionReport,
  type PartitionReport,
  type ConsumerOwner,
  type ErrorPolicy,
  type ErrorAction,
  type ParkedMessage,
  type ParkedReplay,
  type ConsumersHealth,
  type StuckConsumer,
} from '@ordinal/subscriptions';
// Tenants' projections behind row-level security (docs/tenants.md)
export { TenantWallUnavailableError } from '@ordinal/projections';
export { tenantIsolationSql, TENANT_ROLE, TENANT_SETTING } from '@ordinal/log';
// Consumer groups for external services (docs/consumer-groups.md)
export {
  ConsumerGroupsService,
  ConsumerGroupNotFoundError,
  ConsumerGroupConflictError,
  InvalidConsumerGroupError,
  MemberLeaseLostError,
  type ConsumerGroupDeclaration,
  type ConsumerGroupInput,
  type ConsumerGroupDefinition,
  type ConsumerGroupStatus,
  type GroupSource,
  type GroupStrategy,
} from '@ordinal/subscriptions';

// The database the module connects to is missing (SQLSTATE 3D000) and was not created
export { DatabaseMissingError } from '@ordinal/pg';

// The log
export {
  OrdinalError,
  VersionConflictError,
  DatabaseUnavailableError,
  InvalidMessageError,
  MigrationFailedError,
  WriterOverloadedError,
  WriterClosedError,
  OwnershipLostError,
  ImportLineError,
  ImportIdleError,
  LogWriter,
  LogImporter,
  LogReader,
  START_MARKER_TYPE,
  type ImportResult,
  type ImportOptions,
  type StoredMessage,
  type NewMessage,
  type ExpectedVersion,
  type DeleteMode,
  type Ordering,
  type TombstoneReason,
  STREAM_DELETED_TYPE,
} from '@ordinal/log';

// Personal data that can be forgotten (docs/personal-data.md)
export {
  PersonalData,
  SubjectErasure,
  EnvKeyProvider,
  StaticKeyProvider,
  SubjectErasedError,
  MasterKeyMismatchError,
  InvalidPersonalDataRuleError,
  SUBJECT_ERASED_TYPE,
  subjectHash,
  type KeyProvider,
  type PersonalDataRule,
  type PersonalDataOptions,
  type ErasureResult,
  type SubjectErasedBody,
} from '@ordinal/log';

// Segments and the archive (docs/storage.md)
export {
  SegmentKeeper,
  SegmentArchiver,
  FilesystemArchiveStore,
  type ArchiveStore,
  type ArchiveOptions,
  type SegmentInfo,
  type SegmentManifest,
  type SegmentVerification,
} from '@ordinal/log';

// Correlation, causation and traces (docs/observability.md)
export {
  runWithCorrelation,
  runOutsideCorrelation,
  currentCorrelation,
  correlationOf,
  parseTraceparent,
  formatTraceparent,
  SPANS,
  ATTRIBUTES,
  type CorrelationContext,
} from '@ordinal/log';

// The embedded PostgreSQL (PGlite) for development and tests; needs the optional peers @electric-sql/pglite and @electric-sql/pglite-socket.
export {
  startEmbeddedPostgres,
  EmbeddedPostgresError,
  EMBEDDED_PACKAGES,
  type EmbeddedPostgres,
  type EmbeddedPostgresOptions,
} from './embedded/index.js';

// Access rules (docs/security.md): the `access` option, compiled into an injectable AccessRules
export {
  AccessRules,
  AccessRuleError,
  type AccessRule,
  type AccessAction,
  type AccessPrincipal,
  type AccessSubject,
  type AccessCheck,
} from '@ordinal/log';
