import { BadRequestException } from '@nestjs/common';
import { intParam, typesParam } from '../events/query-params.js';

/** The raw query and header of `GET /api/events/stream`. */
export interface StreamQuery {
  startIndex?: string;
  endIndex?: string;
  types?: string;
  shardCount?: string;
  shardIndex?: string;
  lastEventId?: string;
}

/** A validated stream request. */
export interface StreamParams {
  /** First index to send: `Last-Event-ID + 1` when resuming, else `startIndex` (at least 1). */
  startIndex: number;
  endIndex?: number;
  types: string[];
  shard?: { count: number; index: number };
}

/** An optional shard (`shardCount` and `shardIndex` together); 400 when malformed. */
export function shardParams(countRaw: string | undefined, indexRaw: string | undefined): { count: number; index: number } | undefined {
  const hasCount = countRaw !== undefined && countRaw !== '';
  const hasIndex = indexRaw !== undefined && indexRaw !== '';
  if (!hasCount && !hasIndex) return undefined;
  if (!hasCount || !hasIndex) throw new BadRequestException('shardCount and shardIndex go together: send both or neither');
  const count = intParam('shardCount', countRaw, 1, 1, 1_000_000);
  const index = intParam('shardIndex', indexRaw, 0, 0);
  if (index >= count) throw new BadRequestException(`shardIndex must be below shardCount (${count}), got ${index}`);
  return { count, index };
}

/**
 * Validates the stream request before anything is sent: non-negative integers, `endIndex`
 * not below `startIndex`, a well-formed shard and type list. `Last-Event-ID` (the index last
 * received) takes precedence over `startIndex`, as an SSE client's reconnection expects.
 */
export function parseStreamParams(query: StreamQuery): StreamParams {
  const requested = intParam('startIndex', query.startIndex, 1, 0);
  const endIndex = query.endIndex === undefined || query.endIndex === '' ? undefined : intParam('endIndex', query.endIndex, 0, 0);
  if (endIndex !== undefined && endIndex < requested) {
    throw new BadRequestException(`endIndex (${endIndex}) must not be below startIndex (${requested})`);
  }
  const resumeAfter = query.lastEventId === undefined || query.lastEventId === '' ? undefined : intParam('Last-Event-ID', query.lastEventId.trim(), 0, 0);
  const startIndex = Math.max(1, resumeAfter === undefined ? requested : resumeAfter + 1);
  return { startIndex, endIndex, types: typesParam(query.types), shard: shardParams(query.shardCount, query.shardIndex) };
}
