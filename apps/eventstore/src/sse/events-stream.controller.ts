import { AuditTrail, type AuditedRequest } from '../audit/audit-trail.service.js';
import { recordStreamRead } from '../audit/audit.hook.js';
import { AccessPolicy } from '../access/access-policy.service.js';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import {
  Controller,
  Get,
  HttpCode,
  Inject,
  Post,
  Query,
  Req,
  Res,
  ServiceUnavailableException,
} from '@nestjs/common';
import {
  ApiExtension,
  ApiExtraModels,
  ApiHeader,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SSE_EVENT_NAMES } from '@ordinal/contract';
import { ArchivedSegments, LiveRouter, PersonalData } from '@ordinal/log';
import { Scoped } from '../auth/scoped.decorator.js';
import { TicketAuth } from '../auth/ticket-auth.decorator.js';
import { StreamTickets } from '../auth/stream-tickets.service.js';
import type { AuthorisedRequest } from '../auth/auth.guard.js';
import { StreamTicketResponseDto } from './dto/stream-ticket.response.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { SSE_EVENT_DTOS, sseEventSchema } from './dto/sse-events.js';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
import { SseSession } from './sse-session.js';
import { SseWriter } from './sse-writer.js';
import { parseStreamParams } from './sse-params.js';
import { StreamRegistry } from './stream-registry.service.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

/** The reconnection delay a standard EventSource is told to use (SSE `retry:`). */
const SSE_RETRY_MS = 2000;

/** `x-sse-events`: each of the contract's events, in its order, with its data's schema. */
const SSE_EVENTS_EXTENSION = Object.fromEntries(
  SSE_EVENT_NAMES.map((name) => [name, { $ref: getSchemaPath(SSE_EVENT_DTOS[name]) }]),
);

/** The pull stream: Server-Sent Events from any index, history then live. */
@ApiTags('reading')
@ApiTraceHeaders()
@ApiExtraModels(...new Set(Object.values(SSE_EVENT_DTOS)))
@Controller('api/events')
export class EventsStreamController {
  constructor(
    private readonly router: LiveRouter,
    private readonly registry: StreamRegistry,
    private readonly tickets: StreamTickets,
    @Inject(ORDINAL_CONFIG) private readonly config: OrdinalConfig,
    private readonly access: AccessPolicy,
    private readonly audit: AuditTrail,
    private readonly personalData: PersonalData,
    private readonly archived: ArchivedSegments,
  ) {}

  @Post('stream-ticket')
  @Scoped('read')
  @HttpCode(201)
  @ApiOperation({
    summary: 'A ticket for a browser EventSource',
    description:
      "A short-lived (ORDINAL_STREAM_TICKET_TTL_MS, 30 s), single-use ticket: `new EventSource('/api/events/stream?ticket=…')` " +
      'authenticates with it instead of a long-lived token in the URL. Needs the `read` scope.',
  })
  @ApiResponse({ status: 201, type: StreamTicketResponseDto })
  issueTicket(@Req() request: AuthorisedRequest): StreamTicketResponseDto {
    return this.tickets.issue(request.principal!);
  }

  @Get('stream')
  @Scoped('read')
  @TicketAuth()
  @ApiOperation({
    summary: 'Stream the log (Server-Sent Events)',
    description:
      'History then live, in index order, never a miss or a repeat within a connection. Events: `connected` (once, with `retry:`), ' +
      '`message` (`id:` = index), `late-message` (no `id:`), `heartbeat`, `stream-ended` (at `endIndex`, then the stream closes). ' +
      "Each event's `data` is JSON as the 200 response's schema (and `x-sse-events`) describes. Needs the `read` scope.",
  })
  @ApiProduces('text/event-stream')
  @ApiQuery({
    name: 'startIndex',
    required: false,
    description: 'First index to send (0 means 1)',
    schema: { type: 'integer', minimum: 0, default: 1 },
  })
  @ApiQuery({
    name: 'endIndex',
    required: false,
    description: 'Send up to this index, then `stream-ended`',
    schema: { type: 'integer', minimum: 0 },
  })
  @ApiQuery({
    name: 'types',
    required: false,
    description: 'Comma-separated message types',
    schema: { type: 'string' },
  })
  @ApiQuery({
    name: 'shardCount',
    required: false,
    description: 'With shardIndex',
    schema: { type: 'integer', minimum: 1, maximum: 1000000 },
  })
  @ApiQuery({
    name: 'shardIndex',
    required: false,
    description: 'Below shardCount',
    schema: { type: 'integer', minimum: 0 },
  })
  @ApiQuery({
    name: 'tombstones',
    required: false,
    description:
      '`skip`: leave out the positions whose message is hidden or erased (docs/lifecycle.md); by default each comes as a tombstone',
    schema: { type: 'string', enum: ['include', 'skip'], default: 'include' },
  })
  @ApiQuery({
    name: 'tiers',
    required: false,
    description:
      '`hot`: answer 409 `index_archived` when the stream would start in an archived segment, instead of reading it from the archive store (docs/storage.md)',
    schema: { type: 'string', enum: ['all', 'hot'], default: 'all' },
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Resume after this index (wins over startIndex)',
    schema: { type: 'integer', minimum: 0 },
  })
  @ApiResponse({
    status: 200,
    description:
      'The event stream, for example `event: connected` / `retry: 2000` / `data: {"startIndex":1,"headIndex":4}`, a blank line, then `event: message` / `id: 2` / `data: {"message":{"id":2,…}}`, a blank line, …',
    content: {
      'text/event-stream': { schema: sseEventSchema(getSchemaPath) },
    },
  })
  @ApiResponse({
    status: 204,
    description:
      'A resumed request (Last-Event-ID) at or past endIndex: nothing left, a standard EventSource stops',
  })
  @ApiErrors(400, 409, 503)
  @ApiExtension('x-sse-events', SSE_EVENTS_EXTENSION)
  async stream(
    @CurrentPrincipal() principal: Principal,
    @Res() reply: FastifyReply,
    // Read from the request, not @Headers(): that would add a second, required header to the document.
    @Req() request: FastifyRequest,
    @Query('startIndex') startIndex?: string,
    @Query('endIndex') endIndex?: string,
    @Query('types') types?: string,
    @Query('shardCount') shardCount?: string,
    @Query('shardIndex') shardIndex?: string,
    @Query('tombstones') tombstones?: string,
    @Query('tiers') tiers?: string,
  ): Promise<void> {
    const lastEventId = request.headers['last-event-id'];
    const params = parseStreamParams({
      startIndex,
      endIndex,
      types,
      shardCount,
      shardIndex,
      lastEventId,
      tombstones,
      tiers,
    });
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
    const personal = (request as FastifyRequest & AuthorisedRequest).principal?.scopes.has(
      'personal',
    );
    const feed = this.router.open({
      fromIndex: params.startIndex,
      toIndex: params.endIndex,
      types: params.types,
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
