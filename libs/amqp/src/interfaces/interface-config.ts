import { InterfaceConfigError } from '../errors/index.js';

/** How an interface delivers. */
export type InterfaceType = 'replayable' | 'realtime';

/** One push interface as configured. */
export interface InterfaceConfig {
  /** Names the queues `<name>.sink` (and `<name>.ack`) and the bookmark: 1-200 of [A-Za-z0-9._-]. */
  name: string;
  type: InterfaceType;
  /** Only these message types are published (absent or empty: every type). */
  includeTypes?: string[];
  /** Replayable only: the bookmark moves in whole batches of this many indices. @default 1000 */
  ackBatch?: number;
}

/** An interface with its defaults applied. */
export type ResolvedInterfaceConfig = Required<InterfaceConfig>;

const NAME = /^[A-Za-z0-9._-]{1,200}$/;
const TYPE = /^[A-Za-z0-9._:-]{1,200}$/;

/**
 * Validates `{"interfaces": [...]}` (or a bare list) and applies the defaults. Throws an
 * InterfaceConfigError naming the entry and field at fault.
 */
export function parseInterfaces(raw: unknown): ResolvedInterfaceConfig[] {
  const list = Array.isArray(raw)
    ? raw
    : raw && typeof raw === 'object'
      ? ((raw as { interfaces?: unknown }).interfaces ?? [])
      : raw;
  if (!Array.isArray(list))
    throw new InterfaceConfigError('The interface configuration must be {"interfaces": [...]}');
  const seen = new Set<string>();
  return list.map((entry, i) => {
    const where = `interfaces[${i}]`;
    if (!entry || typeof entry !== 'object')
      throw new InterfaceConfigError(`${where} must be an object`);
    const e = entry as Record<string, unknown>;
    if (typeof e.name !== 'string' || !NAME.test(e.name))
      throw new InterfaceConfigError(`${where}.name must be 1-200 characters of [A-Za-z0-9._-]`);
    if (seen.has(e.name)) throw new InterfaceConfigError(`${where}.name '${e.name}' is used twice`);
    seen.add(e.name);
    if (e.type !== 'replayable' && e.type !== 'realtime')
      throw new InterfaceConfigError(`${where}.type must be 'replayable' or 'realtime'`);
    const includeTypes = e.includeTypes ?? [];
    if (
      !Array.isArray(includeTypes) ||
      includeTypes.some((t) => typeof t !== 'string' || !TYPE.test(t))
    ) {
      throw new InterfaceConfigError(`${where}.includeTypes must be a list of message types`);
    }
    const ackBatch = e.ackBatch ?? 1000;
    if (typeof ackBatch !== 'number' || !Number.isSafeInteger(ackBatch) || ackBatch < 1) {
      throw new InterfaceConfigError(`${where}.ackBatch must be a positive integer`);
    }
    return { name: e.name, type: e.type, includeTypes: includeTypes as string[], ackBatch };
  });
}
