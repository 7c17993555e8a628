import { GroupAccess } from './group-access.service.js';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import {
  Controller,
  Get,
  Inject,
  Param,
  Query,
  Res,
  ServiceUnavailableException,
} from '@nestjs/common';
import {
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ConsumerGroupsService } from '@ordinal/subscriptions';
import { PersonalData } from '@ordinal/log';
import { PersonalScope } from '../personal-data/personal-scope.decorator.js';
import { Scoped } from '../auth/scoped.decorator.js';
import { TicketAuth } from '../auth/ticket-auth.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
import { singleParam } from '../events/query-params.js';
import { StreamRegistry } from '../sse/stream-registry.service.js';
import { GroupStreamSession } from './group-stream-session.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

/** A consumer group member's stream (Server-Sent Events). */
@ApiTags('consumer-groups')
@ApiTraceHeaders()
@Controller('api/consumer-groups')
export class ConsumerGroupStreamController {
  constructor(
    private readonly groups: ConsumerGroupsService,
    private readonly registry: StreamRegistry,
    private readonly groupAccess: GroupAccess,
    @Inject(ORDINAL_CONFIG) private readonly config: OrdinalConfig,
    private readonly personalData: PersonalData,
  ) {}

  @Get(':group/stream')
  @Scoped('read')
  @TicketAuth()
  @ApiOperation({
    summary: "A member's stream of a consumer group (Server-Sent Events)",
    description:
      '`lease` first (`{memberId, epoch}`: send both with every ack and nack), then `message` frames (`id: <index>`, data: the message fields, `index`, `deliveryAttempt`, `late`), at most maxInFlight unacknowledged, and `heartbeat`s. Ends when the lease is lost; reconnect with the same memberId. Needs the `read` scope; a browser EventSource passes a stream ticket as `?ticket=`.',
  })
  @ApiParam({ name: 'group', schema: { type: 'string' } })
  @ApiQuery({
    name: 'memberId',
    required: false,
    description: 'Omitted: a new member, its id in the `lease` event',
    schema: { type: 'string', minLength: 1, maxLength: 200 },
  })
  @ApiProduces('text/event-stream')
  @ApiResponse({
    status: 200,
    description: 'The event stream',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiErrors(400, 404, 503)
  async stream(
    @CurrentPrincipal() principal: Principal,
    @Param('group') group: string,
    @Res() reply: FastifyReply,
    @Query('memberId') memberIdRaw?: string,
    @PersonalScope() personal = false,
  ): Promise<void> {
    const memberId = singleParam('memberId', memberIdRaw) || undefined;
    await this.groupAccess.assertRead(principal, group);
    if (this.registry.isClosing)
      throw new ServiceUnavailableException('The server is shutting down; reconnect shortly');
    // Joins before the stream opens: an unknown group or a bad member id is an HTTP error, not a stream.
    const lease = await this.groups.fetch(group, { memberId, max: 0 });
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    reply.raw.flushHeaders();
    await this.registry.run(
      new GroupStreamSession(
        this.groups,
        reply.raw,
        group,
        lease,
        this.config.heartbeatMs,
        personal ? (events) => this.personalData.revealJson(events) : undefined,
      ),
    );
  }
}
