import type {
  DeleteMode,
  ExpectedVersion,
  SealedFields,
  StoredMessage,
  TombstoneReason,
} from '@ordinal/log';

/** One event of an aggregate stream as stored (never upcast: that happens in the repository). */
export interface RecordedEvent {
  /** Stream version, 1..n. */
  version: number;
  eventType: string;
  schemaVersion: number;
  data: unknown;
  metadata: Record<string, unknown> | null;
  /** Its personal fields, sealed (docs/personal-data.md); `data` holds their replacements. */
  personal?: SealedFields;
  /** The pointers of personal fields `data` shows as their replacement (no clear value to show). */
  redacted?: string[];
}

/** A stored stream event with its place in the log. */
export interface StreamEvent extends RecordedEvent {
  /** Global index in the log. */
  index: number;
  createdAt: string;
}

/** An event to append to a stream. */
export interface NewStreamEvent {
  eventType: string;
  /** A JSON object or array. */
  data: unknown;
  metadata?: Record<string, unknown> | null;
  /** @default 1 */
  schemaVersion?: number;
  /** @default the current correlation's (the handler's message, the HTTP request), else a new one */
  correlationId?: string | null;
  /** @default the current correlation's cause (the message being handled) */
  causationId?: string | null;
}

/** The outcome of a stream append: the new version and the global indices it took. */
export interface AppendedEvents {
  streamId: string;
  /** The tenant whose stream it is (docs/tenants.md; `streamId` is its plain id), null for none. */
  tenant: string | null;
  version: number;
  firstIndex: number;
  lastIndex: number;
  messages: StoredMessage[];
}

/** A snapshot of an aggregate's state at a stream version. */
export interface Snapshot {
  version: number;
  state: unknown;
  schemaVersion: number;
  createdAt: string;
}

/**
 * Versions a read did not get because the stream's lifecycle hides them (docs/lifecycle.md):
 * every version below `beforeVersion`, for `reason`.
 */
export interface HiddenVersions {
  beforeVersion: number;
  reason: TombstoneReason;
}

/** The start of a stream read: its current version, the snapshot used (if any), the first page. */
export interface StreamSlice<E extends RecordedEvent = RecordedEvent> {
  version: number;
  snapshot: Snapshot | null;
  events: E[];
  /** Versions hidden by a delete or a retention rule, or null when none are. */
  hidden: HiddenVersions | null;
}

/** A stream's version and lifecycle state. */
export interface StreamStatus {
  streamId: string;
  /** The tenant whose stream it is (docs/tenants.md; `streamId` is its plain id), null for none. */
  tenant: string | null;
  /** Its head version (kept through a soft delete: a re-created stream goes on after it). */
  version: number;
  state: 'live' | 'deleted' | 'tombstoned';
  /** Versions up to this one are deleted (0 when none). */
  deletedThrough: number;
}

/** Options of `StreamStore.delete` and `AggregateRepository.delete`. */
export interface DeleteStreamOptions {
  /** The version the stream must be at (`'any'`: no check). @default 'any' */
  expectedVersion?: ExpectedVersion;
  /** @default 'soft' */
  mode?: DeleteMode;
}

/** What a delete did. */
export interface DeletedStream {
  streamId: string;
  /** The tenant whose stream it is (docs/tenants.md; `streamId` is its plain id), null for none. */
  tenant: string | null;
  mode: DeleteMode;
  /** The stream's version when deleted: versions up to it are hidden. */
  lastVersion: number;
  /** Index of its `$stream-deleted` marker; null when the stream was already soft-deleted. */
  index: number | null;
}

/** Options of `StreamStore.readStream`. */
export interface ReadStreamOptions {
  /** First version wanted (>= 1). @default 1 */
  fromVersion?: number;
  /** Use the newest snapshot at or after `fromVersion`. @default true */
  snapshot?: boolean;
  /** Most events returned. @default every event up to the current version */
  limit?: number;
}

/** A stream read: snapshot (if used) plus the events after it. */
export interface StreamRead {
  streamId: string;
  /** The tenant whose stream it is (docs/tenants.md; `streamId` is its plain id), null for none. */
  tenant: string | null;
  /** The stream's current version (0 when it has no events). */
  version: number;
  snapshot: Snapshot | null;
  events: StreamEvent[];
  /** Versions hidden by a delete or a retention rule, or null when none are. */
  hidden: HiddenVersions | null;
}

/** One stream of `StreamStore.list`: its id, its current version, when it last changed. */
export interface StreamSummary {
  streamId: string;
  /** The tenant whose stream it is (docs/tenants.md; `streamId` is its plain id), null for none. */
  tenant: string | null;
  version: number;
  updatedAt: Date;
}

/** Options of `StreamStore.list`. */
export interface ListStreamsOptions {
  /**
   * Only streams whose id starts with this (`order-` for the category `order`). The store of no
   * tenant lists every tenant's streams too: there it is a stored id's prefix (`acme/`).
   */
  prefix?: string;
  /**
   * Only streams after this id (the last one of the previous page; in the list of the store of
   * no tenant, the stored id: `qualify(last.tenant, last.streamId)`).
   */
  after?: string;
  /** Most streams. @default 100 */
  limit?: number;
  /**
   * Only streams whose category matches one of these SQL LIKE patterns (`AccessRules`
   * `categoryPatterns`); absent or null: every category.
   */
  categories?: readonly string[] | null;
  /** Never streams of these categories. */
  exceptCategories?: readonly string[];
}

export type { ExpectedVersion };
