import { Controller, Get, NotFoundException, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiQuery, ApiTags } from '@nestjs/swagger';
import { LogReader } from '@ordinal/log';
import { compileFilter } from '@ordinal/log/internal';
import { RequireScope } from '../auth/scopes.decorator.js';
import { toMessageResponse } from '../ingest/message-response.js';
import { intParam, typesParam } from './query-params.js';
import { shardParams } from '../stream/stream-params.js';

/** JSON reads of the log. */
@ApiTags('reading')
@ApiBearerAuth()
@Controller('api/events')
export class EventsController {
  constructor(private readonly reader: LogReader) {}

  @Get('head')
  @RequireScope('read')
  async head(): Promise<{ head: number }> {
    return { head: await this.reader.safeHead() };
  }

  @Get()
  @RequireScope('read')
  @ApiQuery({ name: 'fromIndex', required: false })
  @ApiQuery({ name: 'limit', required: false })
  @ApiQuery({ name: 'types', required: false, description: 'Comma-separated message types' })
  @ApiQuery({ name: 'shardCount', required: false })
  @ApiQuery({ name: 'shardIndex', required: false })
  async page(
    @Query('fromIndex') fromRaw?: string,
    @Query('limit') limitRaw?: string,
    @Query('types') typesRaw?: string,
    @Query('shardCount') shardCountRaw?: string,
    @Query('shardIndex') shardIndexRaw?: string,
  ): Promise<Record<string, unknown>> {
    const fromIndex = intParam('fromIndex', fromRaw, 1, 1);
    const limit = intParam('limit', limitRaw, 100, 1, 10_000);
    const types = typesParam(typesRaw);
    const shard = shardParams(shardCountRaw, shardIndexRaw);
    const head = await this.reader.safeHead();
    const read = await this.reader.readUpTo(fromIndex - 1, limit, { types }, head);
    // A shard is applied after the read, so a page may hold fewer than `limit`; nextIndex still moves on.
    const accepts = shard ? compileFilter({ shard }) : null;
    const messages = accepts ? read.messages.filter(accepts) : read.messages;
    return { fromIndex, head, nextIndex: Math.max(fromIndex, read.to + 1), count: messages.length, messages: messages.map(toMessageResponse) };
  }

  @Get(':index')
  @RequireScope('read')
  async get(@Param('index') indexRaw: string): Promise<Record<string, unknown>> {
    const index = intParam('index', indexRaw, 0, 1);
    const message = await this.reader.get(index);
    if (!message) throw new NotFoundException(`No message has index ${index}`);
    return toMessageResponse(message);
  }
}
