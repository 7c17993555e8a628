import type { StoredMessage } from '../message.js';
import { shardOf } from '@ordinal/contract';
import type { FeedOptions } from './log-feed.js';

/** A feed's filter as one predicate (types, tenant, shard, accept); `null` when it lets everything through. */
export function compileFilter(
  options: Pick<FeedOptions, 'types' | 'tenant' | 'shard' | 'accept'>,
): ((message: StoredMessage) => boolean) | null {
  const selected = compileSelection(options);
  const accept = options.accept;
  if (!accept) return selected;
  return selected ? (message) => selected(message) && accept(message) : accept;
}

function compileSelection(
  options: Pick<FeedOptions, 'types' | 'tenant' | 'shard'>,
): ((message: StoredMessage) => boolean) | null {
  const types = options.types && options.types.length > 0 ? new Set(options.types) : null;
  const shard = options.shard;
  if (shard) {
    if (!Number.isInteger(shard.count) || shard.count < 1)
      throw new RangeError(`Shard count must be a positive integer, got ${shard.count}`);
    if (!Number.isInteger(shard.index) || shard.index < 0 || shard.index >= shard.count) {
      throw new RangeError(
        `Shard index must be between 0 and ${shard.count - 1}, got ${shard.index}`,
      );
    }
  }
  const tenant = options.tenant;
  if (!types && !shard && tenant === undefined) return null;
  return (message) =>
    (tenant === undefined || message.tenant === tenant) &&
    (types === null || types.has(message.messageType)) &&
    (!shard || shardOf(message.userId, shard.count) === shard.index);
}
