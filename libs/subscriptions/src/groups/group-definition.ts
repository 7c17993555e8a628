import type { StoredMessage } from '@ordinal/log';
import { InvalidConsumerGroupError } from '../errors/index.js';
import type { SubscriptionStream } from '../source/subscription-stream.js';

/** What a group reads: some message types, one stream category, or the whole log. */
export type GroupSource = { types: string[] } | { category: string } | { all: true };

/** How a group hands out its events (see docs/consumer-groups.md). */
export const GROUP_STRATEGIES = ['round_robin', 'pinned_by_stream', 'pinned_by_key'] as const;
export type GroupStrategy = (typeof GROUP_STRATEGIES)[number];

/** The bounds of a group's settings (whole numbers): the resolver's, and DefineGroupDto's (PUT). */
export const GROUP_SETTING_LIMITS = {
  ackTimeoutMs: { min: 100, max: 86_400_000 },
  maxDeliveries: { min: 1, max: 1000 },
  maxInFlight: { min: 1, max: 10_000 },
  parkAfter: { min: 1, max: 1000 },
} as const;

/** The longest keyPath. */
export const MAX_KEY_PATH = 200;

/** A consumer group's definition as `PUT /api/consumer-groups/:group` takes it (defaults unapplied). */
export interface ConsumerGroupInput {
  source: GroupSource;
  /** Where a new group starts: `start` (index 0), `end` (the head when defined) or after an index. @default 'start' */
  from?: 'start' | 'end' | number;
  /** @default 'round_robin' */
  strategy?: GroupStrategy;
  /** `pinned_by_key` only: a dotted path in the message, e.g. `body.customerId`. */
  keyPath?: string;
  /** An event not acknowledged within this many ms goes to another member. @default 30000 */
  ackTimeoutMs?: number;
  /** Deliveries without an ack after which an event is parked. @default 10 */
  maxDeliveries?: number;
  /** Unacknowledged events one member may hold. @default 100 */
  maxInFlight?: number;
  /** Failures reported by `nack` with `retry` after which an event is parked. @default maxDeliveries */
  parkAfter?: number;
}

/** A definition with every default applied, as stored. */
export interface ConsumerGroupDefinition {
  source: GroupSource;
  from: 'start' | 'end' | number;
  strategy: GroupStrategy;
  keyPath: string | null;
  ackTimeoutMs: number;
  maxDeliveries: number;
  maxInFlight: number;
  parkAfter: number;
}

/** The top-level message fields a `keyPath` may start with. */
const KEY_ROOTS = ['body', 'metadata', 'userId', 'streamId', 'messageType', 'correlationId'];
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/** Checks a group name (the same rule as message types: it appears in URLs and metrics). */
export function checkGroupName(name: string): void {
  if (!NAME.test(name))
    throw new InvalidConsumerGroupError(
      `Consumer group name '${name.slice(0, 50)}' must be 1-200 characters of [A-Za-z0-9._:-], starting with a letter or digit`,
    );
}

/** The fields of a definition, in the order PUT documents them. */
const FIELDS: ReadonlyArray<keyof ConsumerGroupInput> = [
  'source',
  'from',
  'strategy',
  'keyPath',
  'ackTimeoutMs',
  'maxDeliveries',
  'maxInFlight',
  'parkAfter',
];

/**
 * Applies the defaults (in this one place) and checks the definition as
 * `PUT /api/consumer-groups/:group` does (DefineGroupDto: no unknown field, the strategies, the
 * settings' bounds) and the rules that cross fields. The groups file and the module options
 * come here unchecked, so each field is checked for its type too; null is left out.
 */
export function resolveGroupDefinition(input: ConsumerGroupInput): ConsumerGroupDefinition {
  const unknown = Object.keys(input).filter((k) => !FIELDS.includes(k as keyof ConsumerGroupInput));
  if (unknown.length > 0)
    throw new InvalidConsumerGroupError(
      `${unknown[0]} is not a field of a consumer group definition (${FIELDS.join(', ')})`,
    );
  checkSource(input.source);
  const from = input.from ?? 'start';
  if (from !== 'start' && from !== 'end' && !(Number.isSafeInteger(from) && from >= 0))
    throw new InvalidConsumerGroupError(
      `from must be "start", "end" or an index >= 0, got ${JSON.stringify(from)}`,
    );
  const strategy = input.strategy ?? 'round_robin';
  if (!GROUP_STRATEGIES.includes(strategy))
    throw new InvalidConsumerGroupError(
      `strategy must be one of ${GROUP_STRATEGIES.join(', ')}, got ${JSON.stringify(strategy)}`,
    );
  const keyPath = input.keyPath ?? null;
  if (keyPath !== null && (typeof keyPath !== 'string' || keyPath.length > MAX_KEY_PATH))
    throw new InvalidConsumerGroupError(
      `keyPath must be text of at most ${MAX_KEY_PATH} characters, e.g. "body.customerId"`,
    );
  for (const [field, { min, max }] of Object.entries(GROUP_SETTING_LIMITS)) {
    const value = input[field as keyof typeof GROUP_SETTING_LIMITS] ?? null;
    if (value !== null && !(Number.isInteger(value) && value >= min && value <= max))
      throw new InvalidConsumerGroupError(
        `${field} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`,
      );
  }
  if (strategy === 'pinned_by_key' && keyPath === null)
    throw new InvalidConsumerGroupError(
      'strategy pinned_by_key needs keyPath, e.g. "body.customerId"',
    );
  if (strategy !== 'pinned_by_key' && keyPath !== null)
    throw new InvalidConsumerGroupError('keyPath is for strategy pinned_by_key only');
  if (keyPath !== null) checkKeyPath(keyPath);
  const maxDeliveries = input.maxDeliveries ?? 10;
  return {
    source: input.source,
    from,
    strategy,
    keyPath,
    ackTimeoutMs: input.ackTimeoutMs ?? 30_000,
    maxDeliveries,
    maxInFlight: input.maxInFlight ?? 100,
    parkAfter: input.parkAfter ?? maxDeliveries,
  };
}

const TYPE = /^[A-Za-z0-9._:-]{1,200}$/;

function checkSource(source: unknown): asserts source is GroupSource {
  const keys = source !== null && typeof source === 'object' ? Object.keys(source) : [];
  if (keys.length !== 1 || !['types', 'category', 'all'].includes(keys[0]))
    throw new InvalidConsumerGroupError(
      'source must have exactly one of types (a list of message types), category (a stream category) or all (true)',
    );
  const value = (source as Record<string, unknown>)[keys[0]];
  if (keys[0] === 'all' && value !== true)
    throw new InvalidConsumerGroupError('source.all must be true');
  if (
    keys[0] === 'types' &&
    (!Array.isArray(value) ||
      value.length === 0 ||
      value.length > 100 ||
      value.some((t) => typeof t !== 'string' || !TYPE.test(t)))
  )
    throw new InvalidConsumerGroupError(
      'source.types must list 1-100 message types (1-200 characters of [A-Za-z0-9._:-] each)',
    );
  if (
    keys[0] === 'category' &&
    (typeof value !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._:@]{0,199}$/.test(value))
  )
    throw new InvalidConsumerGroupError(
      'source.category must be a stream category (the text before the first "-" of a stream id)',
    );
}

function checkKeyPath(path: string): void {
  const parts = path.split('.');
  if (!KEY_ROOTS.includes(parts[0]) || parts.some((p) => p.length === 0))
    throw new InvalidConsumerGroupError(
      `keyPath '${path}' must be a dotted path starting with one of ${KEY_ROOTS.join(', ')} (e.g. body.customerId)`,
    );
  if (parts[0] !== 'body' && parts[0] !== 'metadata' && parts.length > 1)
    throw new InvalidConsumerGroupError(`keyPath '${path}': ${parts[0]} has no fields`);
}

/** The subscription stream a group's source reads (the reader and late checks share it). */
export function sourceStream(source: GroupSource): SubscriptionStream {
  if ('all' in source) return '$all';
  return source;
}

/**
 * The ordering key of a message under the group's strategy: its stream id, or the value at
 * `keyPath` (strings as they are, other values as JSON); null (no order kept) when the message
 * has none, and always for `round_robin`.
 */
export function orderingKey(
  definition: Pick<ConsumerGroupDefinition, 'strategy' | 'keyPath'>,
  message: StoredMessage,
): string | null {
  if (definition.strategy === 'round_robin') return null;
  if (definition.strategy === 'pinned_by_stream') return message.streamId;
  let value: unknown = message;
  for (const part of definition.keyPath!.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
    value = (value as Record<string, unknown>)[part];
  }
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Which definition fields an existing group may not change, and the first that differs. */
export function changedIdentity(
  stored: ConsumerGroupDefinition,
  next: ConsumerGroupDefinition,
): string | null {
  if (JSON.stringify(stored.source) !== JSON.stringify(next.source)) return 'source';
  if (stored.from !== next.from) return 'from';
  if (stored.strategy !== next.strategy) return 'strategy';
  if (stored.keyPath !== next.keyPath) return 'keyPath';
  return null;
}

/** A group declared in the module options or the server's configuration file: its name and definition. */
export interface ConsumerGroupDeclaration extends ConsumerGroupInput {
  name: string;
}

/**
 * Checks the groups the module's options declare, before anything starts (a bad one stops the
 * start naming the group and the field, as PUT would refuse it); returns them unchanged.
 */
export function checkGroupDeclarations(
  declarations: readonly ConsumerGroupDeclaration[],
): ConsumerGroupDeclaration[] {
  return declarations.map((declaration) => {
    const { name, ...input } = declaration;
    try {
      resolveGroupDefinition(input);
    } catch (error) {
      if (!(error instanceof InvalidConsumerGroupError)) throw error;
      throw new InvalidConsumerGroupError(
        `Consumer group '${name}' of the options (subscriptions.consumerGroups): ${error.message}`,
      );
    }
    return declaration;
  });
}
