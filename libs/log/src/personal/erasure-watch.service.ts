import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { LiveRouter } from '../router/live-router.service.js';
import type { LogFeed } from '../router/log-feed.js';
import { SUBJECT_ERASED_TYPE, TENANT_DELETED_TYPE } from '../log.constants.js';
import { PersonalData } from './personal-data.service.js';
import { subjectHash } from './personal-crypto.js';
import type { SubjectErasedBody } from './subject-erasure.service.js';

/**
 * Tells this process of erasures made by other processes: it follows the log's
 * `$subject-erased` markers live and drops each erased subject's key from memory (and the
 * `$tenant-deleted` markers: every key of the deleted tenant's subjects), so a key
 * another server process destroyed is not used here past the marker's delivery (milliseconds,
 * NOTIFY's latency). The key store itself is the truth; this only empties the cache.
 *
 * It starts when the process first keeps a key in memory (a process that never seals or
 * reveals personal data holds no feed, and its router keeps its idle fast path). Once the
 * feed has joined, the keys read before it are dropped and read again: one destroyed while
 * the feed was not there yet is not kept.
 */
@Injectable()
export class ErasureWatch implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ErasureWatch.name);
  private feed: LogFeed | null = null;
  private closed = false;

  constructor(
    private readonly router: LiveRouter,
    private readonly personal: PersonalData,
  ) {}

  onApplicationBootstrap(): void {
    this.personal.onFirstKey(() => void this.start());
  }

  private async start(): Promise<void> {
    if (this.closed || this.feed !== null) return;
    const feed = (this.feed = this.router.open({
      fromIndex: this.router.deliveredUpTo + 1,
      types: [SUBJECT_ERASED_TYPE, TENANT_DELETED_TYPE],
    }));
    void this.follow(feed);
    await feed.headAtOpen.catch(() => undefined);
    this.personal.forgetKeys();
  }

  private async follow(feed: LogFeed): Promise<void> {
    try {
      for await (const marker of feed) {
        if (marker.messageType === TENANT_DELETED_TYPE) {
          const tenant = (marker.body as { tenant?: unknown } | null)?.tenant;
          if (typeof tenant === 'string') this.personal.forgetTenant(tenant);
          continue;
        }
        const subject = (marker.body as Partial<SubjectErasedBody> | null)?.subject;
        // A tenant's marker names the tenant's subject (docs/tenants.md).
        if (typeof subject === 'string') this.personal.forget(subjectHash(subject, marker.tenant));
      }
    } catch (error) {
      if (this.feed !== null)
        this.logger.warn(
          `Following $subject-erased markers stopped: ${(error as Error).message}; erasures by other processes reach this one at its next start`,
        );
    }
  }

  onApplicationShutdown(): void {
    this.closed = true;
    const feed = this.feed;
    this.feed = null;
    feed?.close();
  }
}
