import { Injectable } from '@nestjs/common';
import { ConsumerGroupsService, type ConsumerGroupStatus } from '@ordinal/subscriptions';
import { AccessPolicy } from '../access/access-policy.service.js';
import type { Principal } from '../auth/principal.js';

/** How long a group's source is remembered for access checks (a source never changes in place). */
const SOURCE_TTL_MS = 5000;

type Source = { category?: string | null; types?: readonly string[] };

/**
 * A member may fetch from a group only if it may read every message of the group's source: a
 * group hands a message to one member of many, so it cannot be filtered per member.
 */
@Injectable()
export class GroupAccess {
  private readonly sources = new Map<string, { source: Source; at: number }>();

  constructor(
    private readonly access: AccessPolicy,
    private readonly groups: ConsumerGroupsService,
  ) {}

  /** Throws 403 `access_denied` unless `principal` may read the group's whole source (404 for no group). */
  async assertRead(principal: Principal, group: string): Promise<void> {
    if (this.access.sourcesOpenTo(principal)) return;
    this.access.assertSource(principal, 'read', await this.sourceOf(group));
  }

  /** The groups of a list that `principal` may read (the others are left out, not refused). */
  readable(principal: Principal, groups: ConsumerGroupStatus[]): ConsumerGroupStatus[] {
    if (this.access.sourcesOpenTo(principal)) return groups;
    return groups.filter((g) => this.access.coversSource(principal, 'read', sourceOf(g)));
  }

  private async sourceOf(group: string): Promise<Source> {
    const known = this.sources.get(group);
    if (known && known.at + SOURCE_TTL_MS > Date.now()) return known.source;
    const resolved = sourceOf(await this.groups.status(group));
    if (this.sources.size > 1000) this.sources.clear();
    this.sources.set(group, { source: resolved, at: Date.now() });
    return resolved;
  }
}

/** A group's source as the access policy reads it: a category, types in every category, or the whole log. */
function sourceOf(status: ConsumerGroupStatus): Source {
  const { source } = status.definition;
  return 'category' in source && source.category
    ? { category: source.category }
    : 'types' in source && source.types
      ? { types: source.types }
      : {};
}
