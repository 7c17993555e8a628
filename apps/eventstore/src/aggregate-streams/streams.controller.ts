import { AuditTrail, type AuditedRequest } from '../audit/audit-trail.service.js';
import { AccessPolicy } from '../access/access-policy.service.js';
import { CurrentPrincipal, CurrentTenant } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import {
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import {
  isValidMetadataTarget,
  StreamMetadataStore,
  StreamStore,
  type StreamEvent,
} from '@ordinal/event-sourcing';
import { PersonalData, qualify } from '@ordinal/log';
import { PersonalScope } from '../personal-data/personal-scope.decorator.js';
import { StreamMetadataDto, StreamMetadataResponseDto } from './dto/stream-metadata.dto.js';
import { expectedVersionOf, expectedVersionQuery } from './expected-version-headers.js';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import {
  AppendResultDto,
  SnapshotReadDto,
  SnapshotSavedDto,
  StreamEventResponseDto,
  StreamListResponseDto,
  StreamReadResponseDto,
  StreamVersionDto,
} from './dto/stream.responses.js';

/** The `:streamId` path parameter as the document describes it. */
const IF_MATCH = ApiHeader({
  name: 'If-Match',
  required: false,
  description: '`"n"`: the stream must be at version n; `*`: it must exist',
});

const STREAM_ID = ApiParam({
  name: 'streamId',
  description:
    '1-200 characters of [A-Za-z0-9._:@-], starting with a letter or digit; the category is the text before the first `-`',
  schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$' },
});
import { intParam } from '../events/query-params.js';
import { parameterError } from '../errors/parameter-errors.js';

/** The `:streamId` of a metadata call. */
const METADATA_ID = ApiParam({
  name: 'streamId',
  description: 'A stream id, or `<category>-*` for the rule of a whole category',
  schema: { type: 'string' },
});
import { AppendEventsDto } from './dto/append-events.dto.js';
import { requestCorrelation } from '../tracing/request-correlation.js';
import { SaveSnapshotDto } from './dto/save-snapshot.dto.js';
import {
  afterStreamParam,
  QUALIFIED_AFTER_PATTERN,
  QUALIFIED_PREFIX_PATTERN,
  booleanParam,
  readableStreamIdParam,
  streamIdParam,
  streamPrefixParam,
} from './aggregate-stream-params.js';
import { assertStorableJson } from '../validation/storable-json.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

/** Largest page of `GET /api/streams/:streamId` (continue with `fromVersion`). */
const MAX_READ = 10_000;
const DEFAULT_READ = 1_000;
/** Largest page of `GET /api/streams`. */
const MAX_LIST = 1_000;
const DEFAULT_LIST = 100;

/**
 * Aggregate streams over REST (A5, Cursus parity): append with an expected version, read with
 * the newest snapshot, current version, snapshots. Aggregate events are ordinary log messages.
 */
@ApiTags('streams')
@ApiTraceHeaders()
@Controller('api/streams')
export class StreamsController {
  constructor(
    private readonly streams: StreamStore,
    private readonly metadata: StreamMetadataStore,
    private readonly access: AccessPolicy,
    private readonly audit: AuditTrail,
    private readonly personalData: PersonalData,
  ) {}

  @Get()
  @Scoped('read', 'header')
  @ApiOperation({
    summary: 'List aggregate streams',
    description:
      "Streams in id order with their current version, a page at a time: `prefix` keeps those whose id starts with it (`order-` for the category `order`), `after` continues after the last id of the previous page (`next`). A request acting for a tenant lists the tenant's streams; a principal of no tenant lists every stream, a tenant's with its `tenant` and named `<tenant>/<id>` in `prefix`, `after` and `next` (docs/tenants.md). Needs the `read` scope.",
  })
  @ApiQuery({
    name: 'prefix',
    required: false,
    description:
      "Only stream ids starting with this (a principal of no tenant: `<tenant>/…` for a tenant's streams)",
    schema: { type: 'string', pattern: QUALIFIED_PREFIX_PATTERN },
  })
  @ApiQuery({
    name: 'after',
    required: false,
    description:
      "Only streams after this stream id (a principal of no tenant: `<tenant>/<id>` for a tenant's stream)",
    schema: { type: 'string', pattern: QUALIFIED_AFTER_PATTERN },
  })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: 'Most streams',
    schema: { type: 'integer', minimum: 1, maximum: MAX_LIST, default: DEFAULT_LIST },
  })
  @ApiOkResponse({ type: StreamListResponseDto })
  @ApiErrors(400, 503)
  async list(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Query('prefix') prefixRaw?: string,
    @Query('after') afterRaw?: string,
    @Query('limit') limitRaw?: string,
  ): Promise<StreamListResponseDto> {
    const limit = intParam('limit', limitRaw, DEFAULT_LIST, 1, MAX_LIST);
    // The database leaves out what the principal may not read, so `next` is always one it may.
    const { categories, except } = this.access.readableStreams(principal);
    // A tenant lists its own streams by their plain ids; a principal of no tenant lists every
    // stream, a tenant's named `<tenant>/<id>` in `prefix`, `after` and `next` (docs/tenants.md).
    const qualified = tenant === undefined;
    const streams = await this.streams.forTenant(tenant).list({
      prefix: streamPrefixParam(prefixRaw, qualified),
      after: afterStreamParam(afterRaw, qualified),
      limit,
      categories,
      exceptCategories: except,
    });
    // (the same rule in Node, as a second wall: a page that lost a row here ends without a `next`
    // rather than naming it)
    const readable = streams.filter((s) => this.access.mayReadStream(principal, s.streamId));
    return {
      streams: readable.map((s) => ({
        streamId: s.streamId,
        ...(qualified && s.tenant !== null ? { tenant: s.tenant } : {}),
        version: s.version,
        updatedAt: s.updatedAt.toISOString(),
      })),
      ...(streams.length === limit && readable.length === streams.length
        ? {
            next: qualified
              ? qualify(streams[streams.length - 1].tenant, streams[streams.length - 1].streamId)
              : streams[streams.length - 1].streamId,
          }
        : {}),
    };
  }

  @Post(':streamId/events')
  @Scoped('write', 'header')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Append events to an aggregate stream',
    description:
      'Atomically, if the stream is at `expectedVersion` (else 409 `version_conflict` with `current`, `expected` and an `Ordinal-Current-Version` header). The expected version may come as `If-Match: "n"` (exactly n), `If-Match: *` (the stream must exist) or `If-None-Match: *` (it must not). A soft-deleted stream is re-created by `no_stream` or `any` (404 `stream_deleted` otherwise); a tombstoned one answers 410 `stream_tombstoned`. Needs the `write` scope.',
  })
  @STREAM_ID
  @IF_MATCH
  @ApiHeader({
    name: 'If-None-Match',
    required: false,
    description: '`*`: the stream must not exist',
  })
  @ApiResponse({ status: 201, type: AppendResultDto })
  @ApiErrors(400, 404, 408, 409, 410, 413, 415, 421, 422, 503, 507)
  async append(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Param('streamId') raw: string,
    @Body() dto: AppendEventsDto,
    @Req() request: FastifyRequest,
  ): Promise<AppendResultDto> {
    const streamId = streamIdParam(raw);
    this.access.assertWrite(
      principal,
      dto.events.map((e) => ({ streamId, messageType: e.eventType })),
    );
    const expectedVersion = expectedVersionOf(request.headers, dto.expectedVersion);
    if (expectedVersion === undefined)
      throw new BadRequestException(
        'expectedVersion is required: in the body, or as If-Match / If-None-Match',
      );
    dto.events.forEach((e, i) => {
      assertStorableJson(e.data, `events.${i}.data`);
      assertStorableJson(e.metadata, `events.${i}.metadata`);
    });
    const { version, firstIndex, lastIndex } = await this.streams.forTenant(tenant).append(
      streamId,
      expectedVersion,
      dto.events.map((e) => ({
        eventType: e.eventType,
        schemaVersion: e.schemaVersion,
        data: e.data,
        metadata: e.metadata ?? null,
      })),
      requestCorrelation(request),
    );
    return { streamId, version, firstIndex, lastIndex };
  }

  @Get(':streamId')
  @Scoped('read', 'header')
  @ApiOperation({
    summary: 'Read an aggregate stream',
    description:
      'The newest usable snapshot and the events after it. Versions hidden by a delete or a retention rule are left out and reported in `hidden`; a soft-deleted stream answers 404 `stream_deleted` (with `lastVersion`), a tombstoned one 410 `stream_tombstoned`. Needs the `read` scope.',
  })
  @STREAM_ID
  @ApiQuery({
    name: 'fromVersion',
    required: false,
    description: 'First version',
    schema: { type: 'integer', minimum: 1, default: 1 },
  })
  @ApiQuery({
    name: 'snapshot',
    required: false,
    description: 'false = plain events, no snapshot',
    schema: { type: 'boolean', default: true },
  })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: 'Most events',
    schema: { type: 'integer', minimum: 1, maximum: MAX_READ, default: DEFAULT_READ },
  })
  @ApiOkResponse({ type: StreamReadResponseDto })
  @ApiErrors(400, 404, 409, 410, 503)
  async read(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Req() request: AuditedRequest,
    @Param('streamId') raw: string,
    @Query('fromVersion') fromRaw?: string,
    @Query('snapshot') snapshotRaw?: string,
    @Query('limit') limitRaw?: string,
    @PersonalScope() personal = false,
  ): Promise<StreamReadResponseDto> {
    this.access.assertStream(principal, 'read', raw);
    const streamId = readableStreamIdParam(raw);
    const fromVersion = intParam('fromVersion', fromRaw, 1, 1);
    const snapshot = booleanParam('snapshot', snapshotRaw, true);
    const limit = intParam('limit', limitRaw, DEFAULT_READ, 1, MAX_READ);
    const read = await this.streams
      .forTenant(tenant)
      .readStream(streamId, { fromVersion, snapshot, limit });
    this.audit.noteRead(request, [{ streamId, messageType: '' }]);
    return {
      streamId,
      version: read.version,
      ...(read.snapshot
        ? { snapshot: { version: read.snapshot.version, state: read.snapshot.state } }
        : {}),
      events: (personal ? await this.personalData.revealEvents(read.events) : read.events).map(
        toEventResponse,
      ),
      count: read.events.length,
      ...(read.hidden ? { hidden: read.hidden } : {}),
    };
  }

  @Delete(':streamId')
  @Scoped('write', 'header')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a stream',
    description:
      'Soft (the default): its events are hidden from stream reads and loads (404 `stream_deleted`) and every log reader gets their positions as tombstones; a `$stream-deleted` marker is appended to the log; a later `no_stream` or `any` append re-creates it at `lastVersion + 1`. `mode=tombstone`: every later call on it answers 410 `stream_tombstoned`, for ever. Optional expected version: `If-Match: "n"` or `?expectedVersion=n`. Its snapshots are deleted. Needs the `write` scope.',
  })
  @STREAM_ID
  @IF_MATCH
  @ApiQuery({
    name: 'mode',
    required: false,
    schema: { type: 'string', enum: ['soft', 'tombstone'], default: 'soft' },
  })
  @ApiQuery({ name: 'expectedVersion', required: false, schema: { type: 'integer', minimum: 0 } })
  @ApiResponse({ status: 204, description: 'Deleted (or already soft-deleted)' })
  @ApiErrors(400, 404, 409, 410, 421, 503, 507)
  async delete(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Param('streamId') raw: string,
    @Req() request: FastifyRequest,
    @Query('mode') modeRaw?: string,
    @Query('expectedVersion') expectedRaw?: string,
  ): Promise<void> {
    this.access.assertStream(principal, 'write', raw);
    const streamId = streamIdParam(raw);
    const mode = modeRaw === undefined || modeRaw === '' ? 'soft' : modeRaw;
    if (mode !== 'soft' && mode !== 'tombstone')
      throw parameterError(
        'mode',
        `mode must be soft or tombstone, got '${String(mode).slice(0, 40)}'`,
      );
    if (request.headers['if-none-match'] !== undefined)
      throw new BadRequestException('If-None-Match has no meaning for a delete; use If-Match');
    const expectedVersion = expectedVersionOf(
      request.headers,
      expectedVersionQuery('expectedVersion', expectedRaw),
    );
    await this.streams
      .forTenant(tenant)
      .delete(streamId, { mode, expectedVersion }, requestCorrelation(request));
  }

  @Get(':streamId/metadata')
  @Scoped('read', 'header')
  @ApiOperation({
    summary: "A stream's (or a category's) metadata",
    description:
      "`maxAge`, `maxCount`, `truncateBefore`, `custom` and the metadata's own version. `:streamId` may be a category pattern, `order-*`. Needs the `read` scope.",
  })
  @METADATA_ID
  @ApiOkResponse({ type: StreamMetadataResponseDto })
  @ApiErrors(400, 410, 503)
  async getMetadata(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Param('streamId') raw: string,
  ): Promise<StreamMetadataResponseDto> {
    this.access.assertStream(principal, 'read', raw);
    return this.metadata.forTenant(tenant).get(metadataTarget(raw));
  }

  @Put(':streamId/metadata')
  @Scoped('write', 'header')
  @ApiOperation({
    summary: "Replace a stream's (or a category's) metadata",
    description:
      'Stream reads, aggregate loads and every log reader apply it at once (docs/lifecycle.md). Optional expected metadata version: `If-Match: "n"` or `?expectedVersion=n` (409 `version_conflict` otherwise). `:streamId` may be a category pattern, `order-*`: the rule of every stream of the category (a stream\'s own settings win). Needs the `write` scope.',
  })
  @METADATA_ID
  @IF_MATCH
  @ApiQuery({ name: 'expectedVersion', required: false, schema: { type: 'integer', minimum: 0 } })
  @ApiOkResponse({ type: StreamMetadataResponseDto })
  @ApiErrors(400, 409, 410, 413, 415, 503)
  async putMetadata(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Param('streamId') raw: string,
    @Body() dto: StreamMetadataDto,
    @Req() request: FastifyRequest,
    @Query('expectedVersion') expectedRaw?: string,
  ): Promise<StreamMetadataResponseDto> {
    this.access.assertStream(principal, 'write', raw);
    const target = metadataTarget(raw);
    const expected = expectedVersionOf(
      { 'if-match': request.headers['if-match'] },
      expectedVersionQuery('expectedVersion', expectedRaw),
    );
    if (expected !== undefined && typeof expected !== 'number')
      throw new BadRequestException(
        'The expected metadata version must be a number (If-Match: "n")',
      );
    if (dto.custom !== undefined) assertStorableJson(dto.custom, 'custom');
    return this.metadata.forTenant(tenant).set(target, { ...dto }, expected);
  }

  @Get(':streamId/version')
  @Scoped('read', 'header')
  @ApiOperation({
    summary: "A stream's current version",
    description:
      '0 when the stream has no events; 404 `stream_deleted` (with `lastVersion`) when soft-deleted, 410 when tombstoned. Needs the `read` scope.',
  })
  @STREAM_ID
  @ApiOkResponse({ type: StreamVersionDto })
  @ApiErrors(400, 404, 410, 503)
  async version(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Param('streamId') raw: string,
  ): Promise<StreamVersionDto> {
    this.access.assertStream(principal, 'read', raw);
    return { version: await this.streams.forTenant(tenant).version(readableStreamIdParam(raw)) };
  }

  @Put(':streamId/snapshot')
  @Scoped('write', 'header')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Save a snapshot',
    description:
      "The aggregate state at a version <= the stream's (else 409 `snapshot_version_exceeds_stream`). Needs the `write` scope.",
  })
  @STREAM_ID
  @ApiResponse({ status: 201, type: SnapshotSavedDto })
  @ApiErrors(400, 404, 408, 409, 410, 413, 415, 421, 503, 507)
  async saveSnapshot(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Param('streamId') raw: string,
    @Body() dto: SaveSnapshotDto,
  ): Promise<SnapshotSavedDto> {
    this.access.assertStream(principal, 'write', raw);
    const streamId = streamIdParam(raw);
    assertStorableJson(dto.state, 'state');
    const saved = await this.streams
      .forTenant(tenant)
      .saveSnapshot(streamId, dto.version, dto.state);
    return { streamId, version: saved.version, createdAt: saved.createdAt };
  }

  @Get(':streamId/snapshot')
  @Scoped('read', 'header')
  @ApiOperation({
    summary: "A stream's newest snapshot",
    description: 'null when it has none. Needs the `read` scope.',
  })
  @STREAM_ID
  @ApiOkResponse({ type: SnapshotReadDto })
  @ApiErrors(400, 404, 410, 503)
  async readSnapshot(
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
    @Param('streamId') raw: string,
  ): Promise<SnapshotReadDto> {
    this.access.assertStream(principal, 'read', raw);
    const streamId = streamIdParam(raw);
    const snapshot = await this.streams.forTenant(tenant).readSnapshot(streamId);
    return {
      streamId,
      snapshot: snapshot
        ? { version: snapshot.version, state: snapshot.state, createdAt: snapshot.createdAt }
        : null,
    };
  }
}

/** The `:streamId` of a metadata call: a stream id or a category pattern (`order-*`), else 400. */
function metadataTarget(raw: string): string {
  if (!isValidMetadataTarget(raw))
    throw parameterError(
      'streamId',
      `'${String(raw).slice(0, 80)}' is neither a stream id nor a category pattern (order-*)`,
    );
  return raw;
}

function toEventResponse(e: StreamEvent): StreamEventResponseDto {
  return {
    version: e.version,
    index: e.index,
    eventType: e.eventType,
    schemaVersion: e.schemaVersion,
    data: e.data,
    metadata: e.metadata,
    createdAt: e.createdAt,
    ...(e.redacted ? { redacted: e.redacted } : {}),
  };
}
