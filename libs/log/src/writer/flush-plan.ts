import { categoryOf, type AppendEntry, type StoredMessage } from '../message.js';
import { MAX_POSITION } from '@ordinal/pg';
import {
  LogFullError,
  StreamDeletedError,
  StreamNotFoundError,
  StreamTombstonedError,
  TenantDeletedError,
  VersionConflictError,
} from '../errors/index.js';
import type { InsertColumns, StreamHeads, StreamStateChanges } from '../sql/index.js';
import type { AppendRequest } from '../message.js';
import type { DuplicateWindow } from './duplicate-window.js';
import { resendKeyOf, type PendingAppend, type PreparedMessage } from './pending-append.js';
import { qualify, unqualified, unqualify } from '../tenant.js';

/** What a flush reads under the log lock before it decides anything. */
export interface WriteState {
  head: number;
  now: string;
  /** Messages already stored, by idempotency key. */
  repeats: Map<string, StoredMessage>;
  /** Current head of each stream the batch appends to (absent = new stream, live at 0). */
  streams: Map<string, StreamHead>;
  /** The batch's tenants that are deleted (docs/tenants.md#deleting-a-tenant): their appends fail. */
  deletedTenants?: ReadonlySet<string>;
}

/** Lifecycle state of a stream (docs/lifecycle.md). */
export type StreamState = 'live' | 'deleted' | 'tombstoned';

/** A stream's version and state as a flush reads them. */
export interface StreamHead {
  version: number;
  state: StreamState;
  /** Versions up to this one are deleted (0 when none). */
  deletedThrough: number;
  /**
   * The stream's retention that can hide a message as it is appended (its own setting, else
   * its category's; absent when neither is set or the flush did not read them): versions below
   * `truncateBefore`, and all but the newest `maxCount`.
   */
  retention?: { truncateBefore: number | null; maxCount: number | null };
}

const NEW_STREAM: StreamHead = { version: 0, state: 'live', deletedThrough: 0 };

/**
 * Why an append (or a delete) to a stream in `head` cannot go ahead, or null. A soft-deleted
 * stream counts as absent for `no_stream`, `0` and `any` (they re-create it); `stream_exists`
 * and a positive exact version fail with `stream_deleted`. A delete must name the exact version.
 */
export function streamCheck(
  stream: NonNullable<AppendRequest['stream']>,
  head: StreamHead,
  deleting?: AppendRequest['delete'],
  tenant?: string,
): Error | null {
  const { expectedVersion } = stream;
  // Errors name the stream as its writer does (a tenant's plain id).
  const streamId = unqualify(tenant, stream.streamId);
  if (head.state === 'tombstoned') return new StreamTombstonedError(streamId);
  if (deleting) {
    if (deleting === 'soft' && head.state === 'deleted')
      return new StreamDeletedError(streamId, head.version);
    if (deleting === 'soft' && head.version === 0) return new StreamNotFoundError(streamId);
    return expectedVersion === head.version
      ? null
      : new VersionConflictError(streamId, head.version, expectedVersion);
  }
  if (head.state === 'deleted') {
    return expectedVersion === 'any' || expectedVersion === 'no_stream' || expectedVersion === 0
      ? null
      : new StreamDeletedError(streamId, head.version);
  }
  const ok =
    expectedVersion === 'any' ||
    (expectedVersion === 'stream_exists'
      ? head.version > 0
      : (expectedVersion === 'no_stream' ? 0 : expectedVersion) === head.version);
  return ok ? null : new VersionConflictError(streamId, head.version, expectedVersion);
}

export type PendingOutcome =
  { ok: true; entries: AppendEntry[]; streamVersion?: number } | { ok: false; error: Error };

export interface FlushPlan {
  rows: InsertColumns;
  streamHeads: StreamHeads;
  /** Streams whose state the flush changes (deleted, tombstoned, re-created). */
  stateChanges: StreamStateChanges;
  head: number;
  outcomes: PendingOutcome[];
  created: StoredMessage[];
  /** Bytes of each created message's body and metadata JSON, as `created` (what a reader's buffer holds of it). */
  createdBytes: number[];
  /** Resend keys to record in the duplicate window after the commit. */
  windowHashes: string[];
  /**
   * Some created message is hidden the moment it commits (its stream's `truncateBefore`, or
   * `maxCount` passed by this very flush): live readers must read the batch back as its
   * tombstones, never be handed its bodies.
   */
  hiddenAtAppend: boolean;
}

/**
 * Decides, without I/O, what one flush writes: each append in queue order gets its version
 * check, its idempotency-key repeats and window duplicates resolved, and the next indices.
 * One append's conflict never affects its neighbours.
 */
export function planFlush(
  batch: PendingAppend[],
  state: WriteState,
  window: DuplicateWindow,
): FlushPlan {
  const rows: InsertColumns = {
    index: [],
    messageType: [],
    userId: [],
    streamId: [],
    streamVersion: [],
    category: [],
    body: [],
    metadata: [],
    schemaVersion: [],
    contentHash: [],
    idempotencyKey: [],
    correlationId: [],
    causationId: [],
    traceparent: [],
    personal: [],
    tenant: [],
  };
  const streamHeads = new Map<string, number>();
  // Each head's version before the flush: it moves only from there (ordinal_move_stream_heads).
  const priors = new Map<string, number>();
  const heads = new Map<string, StreamHead>();
  const stateChanges = new Map<string, StreamHead>();
  const byKey = new Map(state.repeats);
  const batchHashes = new Set<string>();
  const windowHashes: string[] = [];
  // Closed, the window skips nothing and records nothing (`record` ignores what it is given),
  // and it reopens only when loaded at start: no message of this flush needs its resend key.
  const windowOpen = window.isOpen();
  const created: StoredMessage[] = [];
  const createdBytes: number[] = [];
  const outcomes: PendingOutcome[] = [];
  let head = state.head;

  for (const pending of batch) {
    const { skipDuplicateWindow, delete: deleting, tenant } = pending.request;
    if (tenant !== undefined && state.deletedTenants?.has(tenant)) {
      outcomes.push({ ok: false, error: new TenantDeletedError(tenant) });
      continue;
    }
    // A delete's marker is stored outside the stream (it takes no version of it).
    const stream = deleting ? undefined : pending.request.stream;
    let version = 0;
    let streamHead = NEW_STREAM;
    if (pending.request.stream) {
      const id = pending.request.stream.streamId;
      streamHead = heads.get(id) ?? state.streams.get(id) ?? NEW_STREAM;
      version = streamHead.version;
      const error = streamCheck(
        pending.request.stream,
        streamHead,
        deleting,
        pending.request.tenant,
      );
      if (error) {
        outcomes.push({ ok: false, error });
        continue;
      }
    }
    const useWindow = !pending.request.stream && !skipDuplicateWindow;
    // Decided first, taken only if the whole append fits below MAX_POSITION: what this append
    // creates is staged, and its keys and hashes count for its own later messages.
    const entries: AppendEntry[] = [];
    const staged: { message: StoredMessage; p: PreparedMessage; windowed: boolean }[] = [];
    const stagedKeys = new Map<string, StoredMessage>();
    const stagedHashes = new Set<string>();
    let next = head;
    let nextVersion = version;
    for (const p of pending.prepared) {
      const key = p.message.idempotencyKey ?? null;
      const repeat = key === null ? undefined : (byKey.get(key) ?? stagedKeys.get(key));
      if (repeat) {
        entries.push({ status: 'repeat', message: repeat });
        continue;
      }
      // A message with an idempotency key is the key's to deduplicate: the window passes it by.
      const windowed = windowOpen && useWindow && key === null;
      const offset = windowHashes.length + staged.length;
      const resendKey = windowed ? resendKeyOf(p) : '';
      if (
        windowed &&
        (batchHashes.has(resendKey) || stagedHashes.has(resendKey)
          ? window.isOpen(offset)
          : window.isDuplicate(resendKey, offset))
      ) {
        entries.push({ status: 'duplicate', contentHash: p.hash });
        continue;
      }
      next += 1;
      const message = newMessage(
        p,
        next,
        stream ? ++nextVersion : null,
        stream?.streamId,
        state.now,
      );
      // The stored (tenant-qualified) key: what `byKey` and `state.repeats` are keyed by.
      if (key !== null) stagedKeys.set(key, message);
      if (windowed) stagedHashes.add(resendKey);
      staged.push({ message, p, windowed });
      entries.push({ status: 'created', message });
    }
    if (next > MAX_POSITION) {
      outcomes.push({
        ok: false,
        error: new LogFullError(
          `the append needs ${staged.length} position${staged.length === 1 ? '' : 's'} after the head, ${head}`,
        ),
      });
      continue;
    }
    head = next;
    version = nextVersion;
    for (const { message, p, windowed } of staged) {
      addRow(rows, message, p.bodyJson, p.metadataJson);
      if (p.message.idempotencyKey) byKey.set(p.message.idempotencyKey, message);
      if (windowed) {
        const resendKey = resendKeyOf(p);
        batchHashes.add(resendKey);
        windowHashes.push(resendKey);
      }
      created.push(message);
      createdBytes.push(p.bodyJson.length + (p.metadataJson?.length ?? 0));
    }
    if (stream && version > 0) {
      streamHeads.set(stream.streamId, version);
      if (!priors.has(stream.streamId))
        priors.set(stream.streamId, (state.streams.get(stream.streamId) ?? NEW_STREAM).version);
    }
    if (pending.request.stream) {
      const id = pending.request.stream.streamId;
      let next: StreamHead = { ...streamHead, version };
      if (deleting)
        next = {
          version,
          state: deleting === 'soft' ? 'deleted' : 'tombstoned',
          deletedThrough: version,
        };
      // An append re-creates a soft-deleted stream: its versions go on from the deleted ones.
      else if (streamHead.state === 'deleted') next = { ...next, state: 'live' };
      heads.set(id, next);
      if (next.state !== streamHead.state || stateChanges.has(id)) stateChanges.set(id, next);
    }
    outcomes.push({
      ok: true,
      entries,
      streamVersion: pending.request.stream ? version : undefined,
    });
  }
  return {
    hiddenAtAppend: created.some((m) => hiddenAtAppend(m, heads)),
    rows,
    streamHeads: {
      streamId: [...streamHeads.keys()],
      version: [...streamHeads.values()],
      prior: [...streamHeads.keys()].map((id) => priors.get(id)!),
    },
    stateChanges: {
      streamId: [...stateChanges.keys()],
      state: [...stateChanges.values()].map((h) => h.state),
      deletedThrough: [...stateChanges.values()].map((h) => h.deletedThrough),
    },
    head,
    outcomes,
    created,
    createdBytes,
    windowHashes,
  };
}

/** Whether `message` reads back as a tombstone as soon as its flush commits (its stream at its head in `heads`). */
function hiddenAtAppend(message: StoredMessage, heads: Map<string, StreamHead>): boolean {
  if (message.streamId === null || message.streamVersion === null) return false;
  const head = heads.get(qualify(message.tenant, message.streamId));
  const retention = head?.retention;
  if (!head || !retention) return false;
  return (
    (retention.truncateBefore !== null && message.streamVersion < retention.truncateBefore) ||
    (retention.maxCount !== null && message.streamVersion <= head.version - retention.maxCount)
  );
}

/**
 * The stored message an append creates at `index` (the commit time comes with `now`), as its
 * readers get it: a tenant's stream id (`streamId`, stored form) and key plain.
 */
function newMessage(
  p: PreparedMessage,
  index: number,
  streamVersion: number | null,
  streamId: string | undefined,
  now: string,
): StoredMessage {
  const tenant = p.tenant ?? null;
  return {
    id: index,
    messageType: p.message.messageType,
    userId: p.message.userId ?? null,
    body: p.message.body,
    metadata: p.message.metadata ?? null,
    contentHash: p.hash,
    createdAt: now,
    streamId: unqualified(tenant, streamId ?? null),
    streamVersion,
    tenant,
    schemaVersion: p.message.schemaVersion ?? 1,
    idempotencyKey: unqualified(tenant, p.message.idempotencyKey ?? null),
    correlationId: p.message.correlationId ?? null,
    causationId: p.message.causationId ?? null,
    traceparent: p.message.traceparent ?? null,
    redacted: p.message.personal?.fields ?? null,
    ...(p.message.personal ? { personal: p.message.personal } : {}),
  };
}

/** Appends `message`'s row to the flush's column-wise rows. */
function addRow(
  rows: InsertColumns,
  message: StoredMessage,
  bodyJson: string,
  metadataJson: string | null,
): void {
  // A tenant's names in their stored, qualified form (docs/tenants.md).
  const tenant = message.tenant;
  const streamId = message.streamId === null ? null : qualify(tenant, message.streamId);
  rows.index.push(message.id);
  rows.messageType.push(message.messageType);
  rows.userId.push(message.userId);
  rows.streamId.push(streamId);
  rows.streamVersion.push(message.streamVersion);
  rows.category.push(streamId === null ? null : categoryOf(streamId));
  rows.body.push(bodyJson);
  rows.metadata.push(metadataJson);
  rows.schemaVersion.push(message.schemaVersion);
  rows.contentHash.push(message.contentHash);
  rows.idempotencyKey.push(
    message.idempotencyKey === null ? null : qualify(tenant, message.idempotencyKey),
  );
  rows.tenant!.push(tenant);
  rows.correlationId.push(message.correlationId);
  rows.causationId.push(message.causationId);
  rows.traceparent.push(message.traceparent);
  rows.personal!.push(message.personal ? JSON.stringify(message.personal) : null);
}
