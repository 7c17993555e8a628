import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import {
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { StreamStore, type StreamEvent } from '@ordinal/event-sourcing';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import {
  AppendResultDto,
  SnapshotReadDto,
  SnapshotSavedDto,
  StreamEventResponseDto,
  StreamReadResponseDto,
  StreamVersionDto,
} from './dto/stream.responses.js';

/** The `:streamId` path parameter as the document describes it. */
const STREAM_ID = ApiParam({
  name: 'streamId',
  description:
    '1-200 characters of [A-Za-z0-9._:@-], starting with a letter or digit; the category is the text before the first `-`',
  schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$' },
});
import { intParam } from '../events/query-params.js';
import { AppendEventsDto } from './dto/append-events.dto.js';
import { requestCorrelation } from '../tracing/request-correlation.js';
import { SaveSnapshotDto } from './dto/save-snapshot.dto.js';
import { booleanParam, streamIdParam } from './aggregate-stream-params.js';
import { assertStorableJson } from '../validation/storable-json.js';

/** Largest page of `GET /api/streams/:streamId` (continue with `fromVersion`). */
const MAX_READ = 10_000;
const DEFAULT_READ = 1_000;

/**
 * Aggregate streams over REST (A5, Cursus parity): append with an expected version, read with
 * the newest snapshot, current version, snapshots. Aggregate events are ordinary log messages.
 */
@ApiTags('streams')
@Controller('api/streams')
export class StreamsController {
  constructor(private readonly streams: StreamStore) {}

  @Post(':streamId/events')
  @Scoped('write')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Append events to an aggregate stream',
    description:
      'Atomically, if the stream is at `expectedVersion` (else 409 `version_conflict` with `current` and `expected`). Needs the `write` scope.',
  })
  @STREAM_ID
  @ApiResponse({ status: 201, type: AppendResultDto })
  @ApiErrors(400, 408, 409, 413, 415, 421, 503, 507)
  async append(
    @Param('streamId') raw: string,
    @Body() dto: AppendEventsDto,
    @Req() request: FastifyRequest,
  ): Promise<AppendResultDto> {
    const streamId = streamIdParam(raw);
    dto.events.forEach((e, i) => {
      assertStorableJson(e.data, `events.${i}.data`);
      assertStorableJson(e.metadata, `events.${i}.metadata`);
    });
    const { version, firstIndex, lastIndex } = await this.streams.append(
      streamId,
      dto.expectedVersion,
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
  @Scoped('read')
  @ApiOperation({
    summary: 'Read an aggregate stream',
    description: 'The newest usable snapshot and the events after it. Needs the `read` scope.',
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
  @ApiErrors(400, 409, 503)
  async read(
    @Param('streamId') raw: string,
    @Query('fromVersion') fromRaw?: string,
    @Query('snapshot') snapshotRaw?: string,
    @Query('limit') limitRaw?: string,
  ): Promise<StreamReadResponseDto> {
    const streamId = streamIdParam(raw);
    const fromVersion = intParam('fromVersion', fromRaw, 1, 1);
    const snapshot = booleanParam('snapshot', snapshotRaw, true);
    const limit = intParam('limit', limitRaw, DEFAULT_READ, 1, MAX_READ);
    const read = await this.streams.readStream(streamId, { fromVersion, snapshot, limit });
    return {
      streamId,
      version: read.version,
      ...(read.snapshot
        ? { snapshot: { version: read.snapshot.version, state: read.snapshot.state } }
        : {}),
      events: read.events.map(toEventResponse),
      count: read.events.length,
    };
  }

  @Get(':streamId/version')
  @Scoped('read')
  @ApiOperation({
    summary: "A stream's current version",
    description: '0 when the stream has no events. Needs the `read` scope.',
  })
  @STREAM_ID
  @ApiOkResponse({ type: StreamVersionDto })
  @ApiErrors(400, 503)
  async version(@Param('streamId') raw: string): Promise<StreamVersionDto> {
    return { version: await this.streams.version(streamIdParam(raw)) };
  }

  @Put(':streamId/snapshot')
  @Scoped('write')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Save a snapshot',
    description:
      "The aggregate state at a version <= the stream's (else 409 `snapshot_version_exceeds_stream`). Needs the `write` scope.",
  })
  @STREAM_ID
  @ApiResponse({ status: 201, type: SnapshotSavedDto })
  @ApiErrors(400, 408, 409, 413, 415, 421, 503, 507)
  async saveSnapshot(
    @Param('streamId') raw: string,
    @Body() dto: SaveSnapshotDto,
  ): Promise<SnapshotSavedDto> {
    const streamId = streamIdParam(raw);
    assertStorableJson(dto.state, 'state');
    const saved = await this.streams.saveSnapshot(streamId, dto.version, dto.state);
    return { streamId, version: saved.version, createdAt: saved.createdAt };
  }

  @Get(':streamId/snapshot')
  @Scoped('read')
  @ApiOperation({
    summary: "A stream's newest snapshot",
    description: 'null when it has none. Needs the `read` scope.',
  })
  @STREAM_ID
  @ApiOkResponse({ type: SnapshotReadDto })
  @ApiErrors(400, 503)
  async readSnapshot(@Param('streamId') raw: string): Promise<SnapshotReadDto> {
    const streamId = streamIdParam(raw);
    const snapshot = await this.streams.readSnapshot(streamId);
    return {
      streamId,
      snapshot: snapshot
        ? { version: snapshot.version, state: snapshot.state, createdAt: snapshot.createdAt }
        : null,
    };
  }
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
  };
}
