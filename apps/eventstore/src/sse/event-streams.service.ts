import { Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ArchivedSegments, LiveRouter, PersonalData } from '@ordinal/log';
import { AuditTrail, type AuditedRequest } from '../audit/audit-trail.service.js';
import { recordStreamRead } from '../audit/audit.hook.js';
import { AccessPolicy } from '../access/access-policy.service.js';
import type { Principal } from '../auth/principal.js';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
import { SseSession } from './sse-session.js';
import { SseWriter } from './sse-writer.js';
import { parseStreamParams, type StreamQuery } from './sse-params.js';
import { StreamRegistry } from './stream-registry.service.js';

/** The reconnection delay a standard EventSource is told to use (SSE `retry:`). */
const SSE_RETRY_MS = 2000;

/**
 * The log's Server-Sent Events stream, as `GET /api/events/stream` and a tenant's
 * `GET /api/tenants/:tenant/events/stream` serve it: history then live, in index order.
 */
@Injectable()
export class EventStreams {
  constructor(
    private readonly router: LiveRouter,
    private readonly registry: StreamRegistry,
    @Inject(ORDINAL_CONFIG) private readonly config: OrdinalConfig,
    private readonly access: AccessPolicy,
    private readonly audit: AuditTrail,
    private readonly personalData: PersonalData,
    private readonly archived: ArchivedSegments,
  ) {}

  /**
   * Serves the stream `query` asks for to `principal`, until it ends; `tenant`: that tenant's
   * messages only, at their global indices (docs/tenants.md). Throws (before anything is sent)
   * for a malformed request or an unavailable database.
   */
  async serve(
    principal: Principal,
    tenant: string | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    query: Omit<StreamQuery, 'lastEventId'>,
  ): Promise<void> {
    const params = parseStreamParams({ ...query, lastEventId: request.headers['last-event-id'] });
    // A standard EventSource reconnects after every end of stream; a 204 is what makes it stop.
    if (params.finished) {
      reply.status(204).send();
      return;
    }
    if (this.registry.isClosing)
      throw new ServiceUnavailableException('The server is shutting down; reconnect shortly');
    if (params.tiers === 'hot') await this.archived.assertHot(params.startIndex);
    // The writer exists only once the feed has its head; a drop before that just ends the feed.
    const opened: { writer?: SseWriter } = {};
    const personal = principal.scopes.has('personal');
    const feed = this.router.open({
      fromIndex: params.startIndex,
      toIndex: params.endIndex,
      types: params.types,
      // A tenant's feed: its catch-up reads filtered (and under its row-level security), live
      // messages of other tenants passed over, never sent (docs/tenants.md).
      ...(tenant === undefined ? {} : { tenant }),
      shard: params.shard,
      // The access rules: messages the principal may not read are passed over, never sent.
      accept: this.access.readFilter(principal) ?? undefined,
      rendered: true,
      // All streams together held more than ORDINAL_STREAMS_BUFFER_BYTES and this one the most:
      // close it; the client reconnects from its Last-Event-ID.
      onDropped: () => opened.writer?.abort(),
      // The personal scope: a catch-up page's keys in one key-store query, not one per subject.
      beforePage: personal ? (messages) => this.personalData.loadKeys(messages) : undefined,
    });
    let headIndex: number;
    try {
      headIndex = await feed.headAtOpen;
    } catch (error) {
      feed.close();
      throw error;
    }
    this.audit.noteStream(request as AuditedRequest, (category) =>
      this.access.mayReadSome(principal, category),
    );
    // A hijacked answer passes no hook: its audit record is written as it opens.
    if ((request as AuditedRequest).auditedReads) recordStreamRead(this.audit, request, principal);
    reply.hijack();
    const writer = (opened.writer = new SseWriter(reply.raw));
    writer.open();
    const session = new SseSession(feed, writer, {
      params,
      headIndex,
      heartbeatMs: this.config.heartbeatMs,
      retryMs: SSE_RETRY_MS,
      currentHead: () => this.router.deliveredUpTo,
      reveal: personal
        ? {
            cached: (message) => this.personalData.revealCached(message),
            read: (message) => this.personalData.revealOne(message),
          }
        : undefined,
    });
    await this.registry.run(session);
  }
}
