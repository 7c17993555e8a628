import { Controller, Get, NotFoundException, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { LogReader, shardOf } from '@ordinal/log';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { MessageResponseDto } from '../ingest/dto/message.response.js';
import { HeadResponseDto, PageResponseDto } from './dto/read.responses.js';
import { toMessageResponse } from '../ingest/message-response.js';
import { correlationParam, intParam, startParam, typesParam } from './query-params.js';
import { shardParams } from '../sse/sse-params.js';

/** JSON reads of the log. */
@ApiTags('reading')
@Controller('api/events')
export class EventsController {
  constructor(private readonly reader: LogReader) {}

  @Get('head')
  @Scoped('read')
  @ApiOperation({
    summary: 'The safe head',
    description:
      'The highest index any reader may see (committed, gap-free). Needs the `read` scope.',
  })
  @ApiOkResponse({ type: HeadResponseDto })
  @ApiErrors(503)
  async head(): Promise<HeadResponseDto> {
    return { head: await this.reader.safeHead() };
  }

  @Get()
  @Scoped('read')
  @ApiOperation({
    summary: 'A page of the log',
    description:
      'Messages from `fromIndex` in index order; continue from `nextIndex`. Needs the `read` scope.',
  })
  @ApiQuery({
    name: 'fromIndex',
    required: false,
    schema: { type: 'integer', minimum: 1, default: 1 },
  })
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 10000, default: 100 },
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
    name: 'correlationId',
    required: false,
    description:
      'Only the messages of this correlation (docs/observability.md), still in index order',
    schema: { type: 'string', minLength: 1, maxLength: 200 },
  })
  @ApiOkResponse({ type: PageResponseDto })
  @ApiErrors(400, 503)
  async page(
    @Query('fromIndex') fromRaw?: string,
    @Query('limit') limitRaw?: string,
    @Query('types') typesRaw?: string,
    @Query('shardCount') shardCountRaw?: string,
    @Query('shardIndex') shardIndexRaw?: string,
    @Query('correlationId') correlationRaw?: string,
  ): Promise<PageResponseDto> {
    const fromIndex = startParam('fromIndex', fromRaw, 1, 1);
    const limit = intParam('limit', limitRaw, 100, 1, 10_000);
    const types = typesParam(typesRaw);
    const shard = shardParams(shardCountRaw, shardIndexRaw);
    const correlationId = correlationParam(correlationRaw);
    const head = await this.reader.safeHead();
    const read =
      correlationId === undefined
        ? await this.reader.readUpTo(fromIndex - 1, limit, { types }, head)
        : await this.reader.readCorrelation(correlationId, fromIndex - 1, limit, { types }, head);
    // A shard is applied after the read, so a page may hold fewer than `limit`; nextIndex still moves on.
    const messages = shard
      ? read.messages.filter((m) => shardOf(m.userId, shard.count) === shard.index)
      : read.messages;
    return {
      fromIndex,
      head,
      nextIndex: Math.max(fromIndex, read.to + 1),
      count: messages.length,
      messages: messages.map(toMessageResponse),
    };
  }

  @Get(':index')
  @Scoped('read')
  @ApiOperation({ summary: 'One message by its index', description: 'Needs the `read` scope.' })
  @ApiParam({ name: 'index', schema: { type: 'integer', minimum: 1 } })
  @ApiOkResponse({ type: MessageResponseDto })
  @ApiErrors(400, 404, 503)
  async get(@Param('index') indexRaw: string): Promise<MessageResponseDto> {
    const index = intParam('index', indexRaw, 0, 1);
    const message = await this.reader.get(index);
    if (!message) throw new NotFoundException(`No message has index ${index}`);
    return toMessageResponse(message);
  }
}
