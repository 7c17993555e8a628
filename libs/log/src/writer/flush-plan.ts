import { categoryOf, type AppendEntry, type StoredMessage } from '../message.js';
import { VersionConflictError } from '../errors/index.js';
import type { InsertColumns, StreamHeads } from '../sql/index.js';
import type { DuplicateWindow } from './duplicate-window.js';
import type { PendingAppend } from './pending-append.js';

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
    const entries: AppendEntry[] = [];
    for (const p of pending.prepared) {
      const key = p.message.idempotencyKey ?? null;
      const repeat = key === null ? undefined : byKey.get(key);
      if (repeat) {
        entries.push({ status: 'repeat', message: repeat });
        continue;
      }
      if (
        useWindow &&
        (batchHashes.has(p.hash)
          ? window.isOpen(windowHashes.length)
          : window.isDuplicate(p.hash, windowHashes.length))
      ) {
        entries.push({ status: 'duplicate', contentHash: p.hash });
        continue;
      }
      head += 1;
      const streamId = stream?.streamId ?? null;
      const streamVersion = stream ? ++version : null;
      const message: StoredMessage = {
        id: head,
        messageType: p.message.messageType,
        userId: p.message.userId ?? null,
        body: p.message.body,
        metadata: p.message.metadata ?? null,
        contentHash: p.hash,
        createdAt: state.now,
        streamId,
        streamVersion,
        schemaVersion: p.message.schemaVersion ?? 1,
        idempotencyKey: key,
        correlationId: p.message.correlationId ?? null,
        causationId: p.message.causationId ?? null,
        traceparent: p.message.traceparent ?? null,
      };
      rows.index.push(head);
      rows.messageType.push(message.messageType);
      rows.userId.push(message.userId);
      rows.streamId.push(streamId);
      rows.streamVersion.push(streamVersion);
      rows.category.push(streamId === null ? null : categoryOf(streamId));
      rows.body.push(p.bodyJson);
      rows.metadata.push(p.metadataJson);
      rows.schemaVersion.push(message.schemaVersion);
      rows.contentHash.push(p.hash);
      rows.idempotencyKey.push(key);
      rows.correlationId.push(message.correlationId);
      rows.causationId.push(message.causationId);
      rows.traceparent.push(message.traceparent);
      if (key !== null) byKey.set(key, message);
      if (useWindow) {
        batchHashes.add(p.hash);
        windowHashes.push(p.hash);
      }
      created.push(message);
      createdBytes.push(p.bodyJson.length + (p.metadataJson?.length ?? 0));
      entries.push({ status: 'created', message });
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
