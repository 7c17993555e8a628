import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  categoryOf,
  InvalidMessageError,
  LiveRouter,
  qualify,
  StreamTombstonedError,
  VersionConflictError,
} from '@ordinal/log';
import { execute, hasNulEscape, toPosition } from '@ordinal/pg';
import {
  readCategoryRule,
  readStreamState,
  writeCategoryRule,
  writeStreamMetadata,
  type CategoryRuleRow,
  type MetadataValues,
} from '../sql/index.js';
import { assertStreamId, assertTenant, STREAM_ID_PATTERN } from './stream-id.js';
import { guardDatabase } from './guard-database.js';

/**
 * The largest `maxAge` a write accepts: 100 years (of 365.25 days) in seconds. Readers compare
 * any stored value safely; this keeps a setting meaningful (2^53 - 1 seconds is 285 million
 * years, beyond any timestamp).
 */
export const MAX_AGE_LIMIT_SECONDS = 3_155_760_000;

/** Retention settings and free metadata of a stream or a category (docs/lifecycle.md). */
export interface StreamMetadata {
  /** Events older than this many seconds are hidden (`expired`); at most `MAX_AGE_LIMIT_SECONDS`. */
  maxAge?: number;
  /** Only the newest this many events are visible; older ones are hidden (`truncated`). */
  maxCount?: number;
  /** Versions below this one are hidden (`truncated`). */
  truncateBefore?: number;
  /** Anything the application keeps with the stream; Ordinal does not read it. */
  custom?: Record<string, unknown>;
}

/** Metadata as stored, with its own version (1 after the first write; 0 when never written). */
export interface StoredStreamMetadata extends StreamMetadata {
  /** The stream id, or the category pattern (`order-*`). */
  streamId: string;
  /** The tenant whose stream or category it is (docs/tenants.md); absent for none. */
  tenant?: string;
  metadataVersion: number;
}

/** A category pattern: `<category>-*` sets the rule of every stream of that category. */
const CATEGORY_PATTERN = /^([A-Za-z0-9][A-Za-z0-9._:@]{0,197})-\*$/;

/** The category a `<category>-*` pattern names, or null for a stream id. */
export function categoryPattern(id: string): string | null {
  return CATEGORY_PATTERN.exec(id)?.[1] ?? null;
}

/** True when `id` is a stream id or a category pattern (`order-*`). */
export function isValidMetadataTarget(id: unknown): id is string {
  return typeof id === 'string' && (STREAM_ID_PATTERN.test(id) || CATEGORY_PATTERN.test(id));
}

const FIELDS = ['maxAge', 'maxCount', 'truncateBefore', 'custom'] as const;

/** The metadata checked and turned into the values the table stores. */
function toValues(metadata: StreamMetadata): MetadataValues {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
    throw new InvalidMessageError('Stream metadata must be a JSON object');
  for (const key of Object.keys(metadata))
    if (!(FIELDS as readonly string[]).includes(key))
      throw new InvalidMessageError(
        `Stream metadata has no field '${key.slice(0, 40)}'; use ${FIELDS.join(', ')} (put your own under custom)`,
      );
  const count = (name: 'maxAge' | 'maxCount' | 'truncateBefore'): number | null => {
    const value = metadata[name];
    if (value === undefined || value === null) return null;
    if (!Number.isSafeInteger(value) || value < 1)
      throw new InvalidMessageError(`${name} must be an integer >= 1, got ${String(value)}`);
    if (name === 'maxAge' && value > MAX_AGE_LIMIT_SECONDS)
      throw new InvalidMessageError(
        `maxAge must be at most ${MAX_AGE_LIMIT_SECONDS} seconds (100 years), got ${value}`,
      );
    return value;
  };
  const custom = metadata.custom;
  if (custom !== undefined && custom !== null) {
    if (typeof custom !== 'object' || Array.isArray(custom))
      throw new InvalidMessageError('custom must be a JSON object');
  }
  const customJson = custom === undefined || custom === null ? null : JSON.stringify(custom);
  if (customJson !== null && hasNulEscape(customJson))
    throw new InvalidMessageError('custom must not hold a NUL character (\\u0000)');
  return {
    maxAge: count('maxAge'),
    maxCount: count('maxCount'),
    truncateBefore: count('truncateBefore'),
    custom: customJson,
  };
}

/** A metadata row as the API shows it (unset fields left out). */
function toMetadata(
  streamId: string,
  tenant: string | null,
  row: CategoryRuleRow | undefined,
): StoredStreamMetadata {
  const out: StoredStreamMetadata = {
    streamId,
    ...(tenant !== null && { tenant }),
    metadataVersion: row ? toPosition(row.metadata_version) : 0,
  };
  if (row?.max_age != null) out.maxAge = toPosition(row.max_age);
  if (row?.max_count != null) out.maxCount = toPosition(row.max_count);
  if (row?.truncate_before != null) out.truncateBefore = toPosition(row.truncate_before);
  if (row?.custom != null) out.custom = row.custom;
  return out;
}

/**
 * Stream and category metadata: `maxAge`, `maxCount`, `truncateBefore` and `custom`, with an
 * optimistic version of the metadata itself. Stream reads, aggregate loads and every log
 * reader apply them at once (`streamWindow`, `hiddenReason`); a scavenge erases what they hide.
 *
 * The store injected is that of no tenant; `forTenant('acme')` is tenant `acme`'s
 * (docs/tenants.md): its streams' and categories' settings, apart from every other tenant's.
 */
@Injectable()
export class StreamMetadataStore {
  /**
   * The tenant whose streams' and categories' metadata this store keeps (`forTenant`), null
   * for none: stored under the qualified stream id (`acme/order-1`) and category (`acme/order`).
   */
  readonly tenant: string | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly router: LiveRouter,
  ) {}

  /**
   * The metadata store of `tenant`'s streams and categories (docs/tenants.md): the same
   * methods, on the tenant's plain stream ids and category patterns (`order-1`, `order-*`).
   * `undefined` or null: the store of no tenant (the injected one).
   */
  forTenant(tenant?: string | null): StreamMetadataStore {
    const root = this.tenant === null ? this : (Object.getPrototypeOf(this) as StreamMetadataStore);
    if (tenant === undefined || tenant === null) return root;
    assertTenant(tenant);
    return Object.create(root, {
      tenant: { value: tenant, enumerable: true },
    }) as StreamMetadataStore;
  }

  /** A stream's metadata (`order-*`: the category's rule). Tombstoned: `StreamTombstonedError`. */
  async get(id: string): Promise<StoredStreamMetadata> {
    const category = this.target(id);
    const [row] = await guardDatabase(() =>
      execute<CategoryRuleRow & { state?: string }>(
        this.dataSource.manager,
        category === null
          ? readStreamState(qualify(this.tenant, id))
          : readCategoryRule(qualify(this.tenant, category)),
      ),
    );
    if (row?.state === 'tombstoned') throw new StreamTombstonedError(id);
    return toMetadata(id, this.tenant, row);
  }

  /**
   * Replaces a stream's (or a category's) metadata. `expectedMetadataVersion`: the metadata's
   * version it must be at (0: never written), else `VersionConflictError`.
   */
  async set(
    id: string,
    metadata: StreamMetadata,
    expectedMetadataVersion?: number,
  ): Promise<StoredStreamMetadata> {
    const category = this.target(id);
    const values = toValues(metadata);
    if (
      expectedMetadataVersion !== undefined &&
      (!Number.isSafeInteger(expectedMetadataVersion) || expectedMetadataVersion < 0)
    )
      throw new InvalidMessageError('The expected metadata version must be an integer >= 0');
    const expected = expectedMetadataVersion ?? null;
    const [row] = await guardDatabase(() =>
      execute<{ state: string; current: string; written: string | null }>(
        this.dataSource.manager,
        category === null
          ? writeStreamMetadata(qualify(this.tenant, id), values, expected)
          : writeCategoryRule(qualify(this.tenant, category), values, expected),
      ),
    );
    if (row.state === 'tombstoned') throw new StreamTombstonedError(id);
    if (row.written === null)
      throw new VersionConflictError(
        `${id} (metadata)`,
        toPosition(row.current),
        expected ?? 'any',
      );
    // A rule may hide messages from now on: no catch-up page read before it serves a later read.
    this.router.forgetKeptReads();
    return this.get(id);
  }

  /** The category a pattern names, or null for a stream id (checked). */
  private target(id: string): string | null {
    const category = categoryPattern(id);
    if (category === null) assertStreamId(id);
    else if (categoryOf(`${category}-x`) !== category)
      throw new InvalidMessageError(`'${id}' does not name one category`);
    return category;
  }
}
