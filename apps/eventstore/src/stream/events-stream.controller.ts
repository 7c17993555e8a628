import { Controller, Get, Headers, Inject, Query, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { LiveRouter } from '@ordinal/log';
import { RequireScope } from '../auth/scopes.decorator.js';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
import { SseSession } from './sse-session.js';
import { SseWriter } from './sse-writer.js';
import { parseStreamParams } from './stream-params.js';
import { StreamRegistry } from './stream-registry.service.js';

/** The pull stream: Server-Sent Events from any index, history then live. */
@ApiTags('reading')
@ApiBearerAuth()
@Controller('api/events')
export class EventsStreamController {
  constructor(
    private readonly router: LiveRouter,
    private readonly registry: StreamRegistry,
    @Inject(ORDINAL_CONFIG) private readonly config: OrdinalConfig,
  ) {}

  @Get('stream')
  @RequireScope('read')
  @ApiOperation({ summary: 'SSE: connected, message (id = index), heartbeat, stream-ended' })
  @ApiQuery({ name: 'startIndex', required: false })
  @ApiQuery({ name: 'endIndex', required: false })
  @ApiQuery({ name: 'types', required: false, description: 'Comma-separated message types' })
  @ApiQuery({ name: 'shardCount', required: false })
  @ApiQuery({ name: 'shardIndex', required: false })
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'Resume after this index' })
  async stream(
    @Res() reply: FastifyReply,
    @Headers('last-event-id') lastEventId?: string,
    @Query('startIndex') startIndex?: string,
    @Query('endIndex') endIndex?: string,
    @Query('types') types?: string,
    @Query('shardCount') shardCount?: string,
    @Query('shardIndex') shardIndex?: string,
  ): Promise<void> {
    const params = parseStreamParams({ startIndex, endIndex, types, shardCount, shardIndex, lastEventId });
    if (this.registry.isClosing) throw new ServiceUnavailableException('The server is shutting down; reconnect shortly');
    const feed = this.router.open({
      fromIndex: params.startIndex,
      toIndex: params.endIndex,
      types: params.types,
      shard: params.shard,
      mailboxLimit: this.config.streamMailbox,
    });
    let headIndex: number;
    try {
      headIndex = await feed.headAtOpen;
    } catch (error) {
      feed.close();
      throw error;
    }
    reply.hijack();
    const writer = new SseWriter(reply.raw);
    writer.open();
    const session = new SseSession(feed, writer, {
      params,
      headIndex,
      heartbeatMs: this.config.heartbeatMs,
      currentHead: () => this.router.deliveredUpTo,
    });
    await this.registry.run(session);
  }
}
