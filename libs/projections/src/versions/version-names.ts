import { createHash } from 'node:crypto';

/** One build of one projection version. */
export interface BuildKey {
  projection: string;
  version: number;
  build: number;
}

/** Longest schema slug, leaving room for `_v<version>_b<build>` within PostgreSQL's 63 bytes. */
const MAX_SLUG = 40;

/**
 * A projection name as a schema-name stem: lower case, `[a-z0-9_]` only. A name that had to be
 * changed (or shortened) gets 6 hex digits of its hash, so two names never share a stem.
 */
export function schemaSlug(projection: string): string {
  let slug = projection.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (!/^[a-z_]/.test(slug)) slug = `p_${slug}`;
  if (slug === projection && slug.length <= MAX_SLUG) return slug;
  const hash = createHash('sha256').update(projection).digest('hex').slice(0, 6);
  return `${slug.slice(0, MAX_SLUG - 7)}_${hash}`;
}

/**
 * The schema of a build's read-model tables: `<slug>_v<version>`, and `_b<build>` for the
 * builds after the first (blue/green rebuilds). Only `[a-z0-9_]`, so safe as an identifier.
 */
export function buildSchema({ projection, version, build }: BuildKey): string {
  return `${schemaSlug(projection)}_v${version}${build > 1 ? `_b${build}` : ''}`;
}

/**
 * The consumer (group) name of a build: its checkpoints, partitions (`#<n>` appended), leases
 * and parked messages are keyed by it. Version 1's first build keeps the projection's own
 * name, so a projection from before versions keeps its rows.
 */
export function buildConsumers({ projection, version, build }: BuildKey): string {
  if (version === 1 && build === 1) return projection;
  return `${projection}@v${version}${build > 1 ? `.${build}` : ''}`;
}

/** `"schema"` quoted (the names above need no escaping, but a stored one is checked again). */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
