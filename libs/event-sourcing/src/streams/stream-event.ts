import type { ExpectedVersion, StoredMessage } from '@ordinal/log';

/** One event of an aggregate stream as stored (never upcast: that happens in the repository). */
export interface RecordedEvent {
  /** Stream version, 1..n. */
  version: number;
  eventType: string;
  schemaVersion: number;
  data: unknown;
  metadata: Record<string, unknown> | null;
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

/** The start of a stream read: its current version, the snapshot used (if any), the first page. */
export interface StreamSlice<E extends RecordedEvent = RecordedEvent> {
  version: number;
  snapshot: Snapshot | null;
  events: E[];
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
  /** The stream's current version (0 when it has no events). */
  version: number;
  snapshot: Snapshot | null;
  events: StreamEvent[];
}

export type { ExpectedVersion };
