import { categoryOf, type AppendEntry, type StoredMessage } from '../message.js';
import { MAX_POSITION } from '@ordinal/pg';
import { LogFullError, VersionConflictError } from '../errors/index.js';
import type { InsertColumns, StreamHeads } from '../sql/index.js';
import type { DuplicateWindow } from './duplicate-window.js';
import type { PendingAppend, PreparedMessage } from './pending-append.js';

/** What a flush reads under the log lock before it decides anything. */
export interface WriteState {
  head: number;
  now: string;
  /** Messages already stored, by idempotency key. */
  repeats: Map<string, StoredMessage>;
  /** Current version of each stream the batch appends to (absent = new stream). */
  streams: Map<string, number>;
}

export type PendingOutcome =
  { ok: true; entries: AppendEntry[]; streamVersion?: number } | { ok: false; error: Error };

export interface FlushPlan {
  rows: InsertColumns;
  streamHeads: StreamHeads;
  head: number;
  outcomes: PendingOutcome[];
  created: StoredMessage[];
  /** Bytes of each created message's body and metadata JSON, as `created` (what a reader's buffer holds of it). */
  createdBytes: number[];
  /** Hashes to record in the duplicate window after the commit. */
  windowHashes: string[];
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
  };
  const streamHeads = new Map<string, number>();
  const byKey = new Map(state.repeats);
  const batchHashes = new Set<string>();
  const windowHashes: string[] = [];
  const created: StoredMessage[] = [];
  const createdBytes: number[] = [];
  const outcomes: PendingOutcome[] = [];
  let head = state.head;

  for (const pending of batch) {
    const { stream, skipDuplicateWindow } = pending.request;
    let version = 0;
    if (stream) {
      version = streamHeads.get(stream.streamId) ?? state.streams.get(stream.streamId) ?? 0;
      const expected = stream.expectedVersion === 'no_stream' ? 0 : stream.expectedVersion;
      if (expected !== 'any' && expected !== version) {
        outcomes.push({
          ok: false,
          error: new VersionConflictError(stream.streamId, version, stream.expectedVersion),
        });
        continue;
      }
    }
    const useWindow = !stream && !skipDuplicateWindow;
    // Decided first, taken only if the whole append fits below MAX_POSITION: what this append
    // creates is staged, and its keys and hashes count for its own later messages.
    const entries: AppendEntry[] = [];
    const staged: { message: StoredMessage; p: PreparedMessage }[] = [];
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
      const windowed = windowHashes.length + staged.length;
      if (
        useWindow &&
        (batchHashes.has(p.hash) || stagedHashes.has(p.hash)
          ? window.isOpen(windowed)
          : window.isDuplicate(p.hash, windowed))
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
      if (key !== null) stagedKeys.set(key, message);
      if (useWindow) stagedHashes.add(p.hash);
      staged.push({ message, p });
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
    for (const { message, p } of staged) {
      addRow(rows, message, p.bodyJson, p.metadataJson);
      if (message.idempotencyKey !== null) byKey.set(message.idempotencyKey, message);
      if (useWindow) {
        batchHashes.add(p.hash);
        windowHashes.push(p.hash);
      }
      created.push(message);
      createdBytes.push(p.bodyJson.length + (p.metadataJson?.length ?? 0));
    }
    if (stream && version > 0) streamHeads.set(stream.streamId, version);
    outcomes.push({ ok: true, entries, streamVersion: stream ? version : undefined });
  }
  return {
    rows,
    streamHeads: { streamId: [...streamHeads.keys()], version: [...streamHeads.values()] },
    head,
    outcomes,
    created,
    createdBytes,
    windowHashes,
  };
}

/** The stored message an append creates at `index` (the commit time comes with `now`). */
function newMessage(
  p: PreparedMessage,
  index: number,
  streamVersion: number | null,
  streamId: string | undefined,
  now: string,
): StoredMessage {
  return {
    id: index,
    messageType: p.message.messageType,
    userId: p.message.userId ?? null,
    body: p.message.body,
    metadata: p.message.metadata ?? null,
    contentHash: p.hash,
    createdAt: now,
    streamId: streamId ?? null,
    streamVersion,
    schemaVersion: p.message.schemaVersion ?? 1,
    idempotencyKey: p.message.idempotencyKey ?? null,
    correlationId: p.message.correlationId ?? null,
    causationId: p.message.causationId ?? null,
    traceparent: p.message.traceparent ?? null,
  };
}

/** Appends `message`'s row to the flush's column-wise rows. */
function addRow(
  rows: InsertColumns,
  message: StoredMessage,
  bodyJson: string,
  metadataJson: string | null,
): void {
  rows.index.push(message.id);
  rows.messageType.push(message.messageType);
  rows.userId.push(message.userId);
  rows.streamId.push(message.streamId);
  rows.streamVersion.push(message.streamVersion);
  rows.category.push(message.streamId === null ? null : categoryOf(message.streamId));
  rows.body.push(bodyJson);
  rows.metadata.push(metadataJson);
  rows.schemaVersion.push(message.schemaVersion);
  rows.contentHash.push(message.contentHash);
  rows.idempotencyKey.push(message.idempotencyKey);
  rows.correlationId.push(message.correlationId);
  rows.causationId.push(message.causationId);
  rows.traceparent.push(message.traceparent);
}
