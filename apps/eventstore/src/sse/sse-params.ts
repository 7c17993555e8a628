import { parameterError } from '../errors/parameter-errors.js';
import {
  intParam,
  singleParam,
  startParam,
  tombstonesParam,
  tiersParam,
  typesParam,
} from '../events/query-params.js';

/** The raw query and header of `GET /api/events/stream`. */
export interface StreamQuery {
  startIndex?: unknown;
  endIndex?: unknown;
  types?: unknown;
  shardCount?: unknown;
  shardIndex?: unknown;
  lastEventId?: unknown;
  tombstones?: unknown;
  tiers?: unknown;
}

/** A validated stream request. */
export interface StreamParams {
  /** First index to send: `Last-Event-ID + 1` when resuming, else `startIndex` (at least 1). */
  startIndex: number;
  endIndex?: number;
  types: string[];
  shard?: { count: number; index: number };
  /** `skip`: hidden and erased positions are not sent as `tombstone` events. */
  tombstones: 'include' | 'skip';
  /** `hot`: 409 `index_archived` when the stream would start in an archived segment. */
  tiers: 'all' | 'hot';
  /** True when a resumed request (Last-Event-ID) is already at or past `endIndex`: nothing is left to send. */
  finished: boolean;
}

/** An optional shard (`shardCount` and `shardIndex` together); 400 when malformed. */
export function shardParams(
  countValue: unknown,
  indexValue: unknown,
): { count: number; index: number } | undefined {
  const countRaw = singleParam('shardCount', countValue);
  const indexRaw = singleParam('shardIndex', indexValue);
  const hasCount = countRaw !== undefined && countRaw !== '';
  const hasIndex = indexRaw !== undefined && indexRaw !== '';
  if (!hasCount && !hasIndex) return undefined;
  if (!hasCount || !hasIndex)
    throw parameterError(
      hasCount ? 'shardIndex' : 'shardCount',
      'shardCount and shardIndex go together: send both or neither',
    );
  const count = intParam('shardCount', countRaw, 1, 1, 1_000_000);
  const index = intParam('shardIndex', indexRaw, 0, 0);
  if (index >= count)
    throw parameterError(
      'shardIndex',
      `shardIndex must be below shardCount (${count}), got ${index}`,
    );
  return { count, index };
}

/**
 * Validates the stream request before anything is sent: non-negative integers, `endIndex`
 * not below `startIndex`, a well-formed shard and type list. `Last-Event-ID` (the index last
 * received) takes precedence over `startIndex`, as an SSE client's reconnection expects.
 */
export function parseStreamParams(query: StreamQuery): StreamParams {
  const requested = startParam('startIndex', query.startIndex, 1, 0);
  const endRaw = singleParam('endIndex', query.endIndex);
  const endIndex =
    endRaw === undefined || endRaw === '' ? undefined : intParam('endIndex', endRaw, 0, 0);
  if (endIndex !== undefined && endIndex < requested) {
    throw parameterError(
      'endIndex',
      `endIndex (${endIndex}) must not be below startIndex (${requested})`,
    );
  }
  const lastEventId = singleParam('Last-Event-ID', query.lastEventId);
  const resumeAfter =
    lastEventId === undefined || lastEventId === ''
      ? undefined
      : intParam('Last-Event-ID', lastEventId.trim(), 0, 0);
  const startIndex = Math.max(1, resumeAfter === undefined ? requested : resumeAfter + 1);
  const finished = resumeAfter !== undefined && endIndex !== undefined && resumeAfter >= endIndex;
  return {
    startIndex,
    endIndex,
    types: typesParam(query.types),
    shard: shardParams(query.shardCount, query.shardIndex),
    tombstones: tombstonesParam(query.tombstones),
    tiers: tiersParam(query.tiers),
    finished,
  };
}
