import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TENANT_PATTERN } from '@ordinal/log';
import { CurrentPrincipal, CurrentTenant } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { Scoped } from '../auth/scoped.decorator.js';
import { TicketAuth } from '../auth/ticket-auth.decorator.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';
import { ApiEventStream } from './api-event-stream.decorator.js';
import { SSE_EVENT_DTOS } from './dto/sse-events.js';
import { EventStreams } from './event-streams.service.js';

/**
 * A tenant's feed (docs/tenants.md): the log's stream of one tenant's messages, named by the
 * path, for a principal of that tenant or one with the `tenants` scope.
 */
@ApiTags('reading')
@ApiTraceHeaders()
@ApiExtraModels(...new Set(Object.values(SSE_EVENT_DTOS)))
@Controller('api/tenants')
export class TenantEventsStreamController {
  constructor(private readonly streams: EventStreams) {}

  @Get(':tenant/events/stream')
  @Scoped('read', 'path')
  @TicketAuth()
  @ApiOperation({
    summary: "Stream a tenant's messages (Server-Sent Events)",
    description:
      "`GET /api/events/stream` of one tenant's messages: the same events, parameters and `Last-Event-ID`. Its positions are the log's global indices, so it has gaps where other tenants' messages are: that is normal, resume from the last `id` received. " +
      "For a principal of that tenant, or one with the `tenants` scope and no tenant of its own (else 403 `tenant_forbidden`); a stream ticket works as on the log's stream. Needs the `read` scope.",
  })
  @ApiParam({
    name: 'tenant',
    description: "The tenant (1-63 letters, digits, '_' or '.', starting with a letter or digit)",
    schema: { type: 'string', pattern: TENANT_PATTERN.source },
  })
  @ApiEventStream()
  async stream(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Res() reply: FastifyReply,
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
