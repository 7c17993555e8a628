import { type MessageKeys, type StoredMessage } from '@ordinal/log';
import { shardOf } from '@ordinal/contract';
import { InvalidProjectionError } from '../errors/index.js';
import type { PartitionKey } from '../projection-options.js';

/** Most partitions one projection may have. */
const MAX_PARTITIONS = 1024;

/** The partition names and membership tests of a projection (one unpartitioned "partition" by default). */
export interface ProjectionPartitions {
  names: string[];
  /** Per partition: whether a message belongs to it (undefined when unpartitioned). */
  accepts: (((message: StoredMessage) => boolean) | undefined)[];
  /**
   * Per partition: the same test on a message's keys alone, when the key is the stream or the
   * user (undefined for a function of the message, or when unpartitioned). A process running
   * some of the partitions then reads the keys of the others' rows only (SharedSource).
   */
  acceptsKeys: (((keys: MessageKeys) => boolean) | undefined)[];
}

function keyOf(partitionBy: PartitionKey): (message: StoredMessage) => string {
  if (partitionBy === 'streamId') return (m) => m.streamId ?? '';
  if (partitionBy === 'userId') return (m) => m.userId ?? '';
  return (m) => String(partitionBy(m) ?? '');
}

/** Keys whose partition a projection remembers at most (then it starts afresh). */
const KNOWN_KEYS = 65_536;

/**
 * `shardOf(key, count)`, remembered per key: the partitions of a process test the same
 * messages (each keeps its own), and most keys come back.
 */
function partitionOfKey(count: number): (key: string) => number {
  const known = new Map<string, number>();
  return (key) => {
    let n = known.get(key);
    if (n === undefined) {
      if (known.size >= KNOWN_KEYS) known.clear();
      known.set(key, (n = shardOf(key, count)));
    }
    return n;
  };
}

/**
 * Splits a projection into `<name>#<n>` partitions: a message belongs to partition
 * `shardOf(key, count)` (murmur3 of the key, floor-mod the count, as the log shards users).
 * Throws InvalidProjectionError for a count or key that cannot work.
 */
export function projectionPartitions(
  name: string,
  partitions: number | undefined,
  partitionBy: PartitionKey | undefined,
): ProjectionPartitions {
  const count = partitions ?? 1;
  if (!Number.isInteger(count) || count < 1 || count > MAX_PARTITIONS) {
    throw new InvalidProjectionError(
      `Projection '${name}' has partitions: ${String(partitions)}; use a whole number from 1 to ${MAX_PARTITIONS}`,
    );
  }
  const by = partitionBy ?? 'streamId';
  if (by !== 'streamId' && by !== 'userId' && typeof by !== 'function') {
    throw new InvalidProjectionError(
      `Projection '${name}' has partitionBy: ${JSON.stringify(by)}; use 'streamId', 'userId' or a function of the message returning its key`,
    );
  }
  if (count === 1) return { names: [name], accepts: [undefined], acceptsKeys: [undefined] };
  const key = keyOf(by);
  const partitionOf = partitionOfKey(count);
  const keyed = by === 'streamId' || by === 'userId' ? by : undefined;
  return {
    names: Array.from({ length: count }, (_, i) => `${name}#${i}`),
    accepts: Array.from(
      { length: count },
      (_, i) => (message: StoredMessage) => partitionOf(key(message)) === i,
    ),
    acceptsKeys: Array.from({ length: count }, (_, i) =>
      keyed ? (keys: MessageKeys) => partitionOf(keys[keyed] ?? '') === i : undefined,
    ),
  };
}
