import { AuditTrail, type AuditedRequest } from '../audit/audit-trail.service.js';
import { AccessPolicy } from '../access/access-policy.service.js';
import { CurrentPrincipal, CurrentTenant } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { Controller, Get, NotFoundException, Param, Query, Req } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { TombstoneResponseDto } from './dto/tombstone.response.js';
import { LogReader, PersonalData, shardOf } from '@ordinal/log';
import { PersonalScope } from '../personal-data/personal-scope.decorator.js';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { MessageResponseDto } from '../ingest/dto/message.response.js';
import { HeadResponseDto, PageResponseDto } from './dto/read.responses.js';
import { toMessageResponse } from '../ingest/message-response.js';
import {
  correlationParam,
  intParam,
  startParam,
  tombstonesParam,
  tiersParam,
  typesParam,
} from './query-params.js';
import { shardParams } from '../sse/sse-params.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

/** JSON reads of the log. */
@ApiTags('reading')
@ApiTraceHeaders()
@Controller('api/events')
export class EventsController {
  constructor(
    private readonly reader: LogReader,
    private readonly access: AccessPolicy,
    private readonly audit: AuditTrail,
    private readonly personalData: PersonalData,
  ) {}

  @Get('head')
  @Scoped('read', 'header')
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
  @Scoped('read', 'header')
  @ApiOperation({
    summary: 'A page of the log',
    description:
      "Messages from `fromIndex` in index order; continue from `nextIndex`. A request acting for a tenant gets that tenant's messages only, with their global indices (docs/tenants.md). Needs the `read` scope; personal fields in clear need the `personal` scope too (docs/personal-data.md).",
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
      '`hot`: answer 409 `index_archived` where the page reaches an archived segment, instead of reading it from the archive store (docs/storage.md)',
    schema: { type: 'string', enum: ['all', 'hot'], default: 'all' },
  })
  @ApiOkResponse({ type: PageResponseDto })
  @ApiErrors(400, 409, 503)
  async page(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Req() request: AuditedRequest,
    @Query('fromIndex') fromRaw?: string,
    @Query('limit') limitRaw?: string,
    @Query('types') typesRaw?: string,
    @Query('shardCount') shardCountRaw?: string,
    @Query('shardIndex') shardIndexRaw?: string,
    @Query('correlationId') correlationRaw?: string,
    @Query('tombstones') tombstonesRaw?: string,
    @Query('tiers') tiersRaw?: string,
    @PersonalScope() personal = false,
  ): Promise<PageResponseDto> {
    const fromIndex = startParam('fromIndex', fromRaw, 1, 1);
    const limit = intParam('limit', limitRaw, 100, 1, 10_000);
    const types = typesParam(typesRaw);
    const shard = shardParams(shardCountRaw, shardIndexRaw);
    const correlationId = correlationParam(correlationRaw);
    const filter = {
      types,
      tombstones: tombstonesParam(tombstonesRaw),
      tiers: tiersParam(tiersRaw),
      // A tenant's page: its messages only, read under its row-level security (docs/tenants.md).
      ...(tenant === undefined ? {} : { tenant }),
    };
    const head = await this.reader.safeHead();
    const read =
      correlationId === undefined
        ? await this.reader.readUpTo(fromIndex - 1, limit, filter, head)
        : await this.reader.readCorrelation(correlationId, fromIndex - 1, limit, filter, head);
    // A shard and the access rules are applied after the read, so a page may hold fewer than
    // `limit`; nextIndex still moves on (past the messages the principal may not see, too).
    const allowed = this.access.readFilter(principal);
    const messages =
      shard || allowed
        ? read.messages.filter(
            (m) =>
              (!shard || shardOf(m.userId, shard.count) === shard.index) &&
              (!allowed || allowed(m)),
          )
        : read.messages;
    this.audit.noteRead(request, messages);
    return {
      fromIndex,
      head,
      nextIndex: Math.max(fromIndex, read.to + 1),
      count: messages.length,
      messages: (personal ? await this.personalData.reveal(messages) : messages).map(
        toMessageResponse,
      ),
    };
  }

  @Get(':index')
  @Scoped('read', 'header')
  @ApiOperation({
    summary: 'One message by its index',
    description:
      "The message, or its tombstone when it is hidden or erased (docs/lifecycle.md). A request acting for a tenant finds that tenant's messages only: another tenant's index answers 404 as a missing one (docs/tenants.md). Needs the `read` scope.",
  })
  @ApiParam({ name: 'index', schema: { type: 'integer', minimum: 1 } })
  @ApiExtraModels(TombstoneResponseDto)
  @ApiOkResponse({
    schema: {
      oneOf: [
        { $ref: getSchemaPath(MessageResponseDto) },
        { $ref: getSchemaPath(TombstoneResponseDto) },
      ],
    },
  })
  @ApiErrors(400, 404, 503)
  async get(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Req() request: AuditedRequest,
    @Param('index') indexRaw: string,
    @PersonalScope() personal = false,
  ): Promise<MessageResponseDto | TombstoneResponseDto> {
    const index = intParam('index', indexRaw, 0, 1);
    const message = await this.reader.get(index);
    // Another tenant's message answers as no message at all: a tenant does not learn that
    // another tenant's positions exist (docs/tenants.md).
    if (!message || (tenant !== undefined && message.tenant !== tenant))
      throw new NotFoundException(`No message has index ${index}`);
    this.access.assertRead(principal, message);
    this.audit.noteRead(request, [message]);
    return toMessageResponse(personal ? await this.personalData.revealOne(message) : message);
  }
}
