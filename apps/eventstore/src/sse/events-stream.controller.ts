import { CurrentPrincipal, CurrentTenant } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { Controller, Get, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Scoped } from '../auth/scoped.decorator.js';
import { TicketAuth } from '../auth/ticket-auth.decorator.js';
import { StreamTickets } from '../auth/stream-tickets.service.js';
import { StreamTicketResponseDto } from './dto/stream-ticket.response.js';
import { SSE_EVENT_DTOS } from './dto/sse-events.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';
import { ApiEventStream } from './api-event-stream.decorator.js';
import { EventStreams } from './event-streams.service.js';

/** The pull stream: Server-Sent Events from any index, history then live. */
@ApiTags('reading')
@ApiTraceHeaders()
@ApiExtraModels(...new Set(Object.values(SSE_EVENT_DTOS)))
@Controller('api/events')
export class EventsStreamController {
  constructor(
    private readonly streams: EventStreams,
    private readonly tickets: StreamTickets,
  ) {}

  @Post('stream-ticket')
  @Scoped('read', 'header')
  @HttpCode(201)
  @ApiOperation({
    summary: 'A ticket for a browser EventSource',
    description:
      "A short-lived (ORDINAL_STREAM_TICKET_TTL_MS, 30 s), single-use ticket: `new EventSource('/api/events/stream?ticket=…')` " +
      "authenticates with it instead of a long-lived token in the URL. It carries the request's tenant (docs/tenants.md): its stream shows that tenant's messages only. Needs the `read` scope.",
  })
  @ApiResponse({ status: 201, type: StreamTicketResponseDto })
  issueTicket(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
  ): StreamTicketResponseDto {
    return this.tickets.issue(principal, tenant);
  }

  @Get('stream')
  @Scoped('read', 'header')
  @TicketAuth()
  @ApiOperation({
    summary: 'Stream the log (Server-Sent Events)',
    description:
      'History then live, in index order, never a miss or a repeat within a connection. Events: `connected` (once, with `retry:`), ' +
      '`message` (`id:` = index), `late-message` (no `id:`), `heartbeat`, `stream-ended` (at `endIndex`, then the stream closes). ' +
      "Each event's `data` is JSON as the 200 response's schema (and `x-sse-events`) describes. A request acting for a tenant gets that tenant's messages only, at their global indices (docs/tenants.md). Needs the `read` scope.",
  })
  @ApiEventStream()
  async stream(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Res() reply: FastifyReply,
    // Last-Event-ID is read from the request, not @Headers(): that would add a second, required header to the document.
    @Req() request: FastifyRequest,
    @Query('startIndex') startIndex?: string,
    @Query('endIndex') endIndex?: string,
    @Query('types') types?: string,
    @Query('shardCount') shardCount?: string,
    @Query('shardIndex') shardIndex?: string,
    @Query('tombstones') tombstones?: string,
    @Query('tiers') tiers?: string,
  ): Promise<void> {
    await this.streams.serve(principal, tenant, request, reply, {
      startIndex,
      endIndex,
      types,
      shardCount,
      shardIndex,
      tombstones,
      tiers,
    });
  }
}
