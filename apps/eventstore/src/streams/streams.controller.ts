import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { StreamStore, type StreamEvent } from '@ordinal/event-sourcing';
import { RequireScope } from '../auth/scopes.decorator.js';
import { intParam } from '../events/query-params.js';
import { AppendEventsDto } from './dto/append-events.dto.js';
import { SaveSnapshotDto } from './dto/save-snapshot.dto.js';
import { booleanParam, streamIdParam } from './stream-params.js';
import { assertStorableJson } from '../validation/storable-json.js';

/** Largest page of `GET /api/streams/:streamId` (continue with `fromVersion`). */
const MAX_READ = 10_000;
const DEFAULT_READ = 1_000;

/**
 * Aggregate streams over REST (A5, Cursus parity): append with an expected version, read with
 * the newest snapshot, current version, snapshots. Aggregate events are ordinary log messages.
 */
@ApiTags('streams')
@ApiBearerAuth()
@Controller('api/streams')
export class StreamsController {
  constructor(private readonly streams: StreamStore) {}

  @Post(':streamId/events')
  @RequireScope('write')
  @HttpCode(201)
  @ApiResponse({ status: 201, description: '`{streamId, version, firstIndex, lastIndex}`' })
  @ApiResponse({ status: 409, description: '`{error: "version_conflict", current, expected}`' })
  async append(@Param('streamId') raw: string, @Body() dto: AppendEventsDto): Promise<Record<string, unknown>> {
    const streamId = streamIdParam(raw);
    dto.events.forEach((e, i) => {
      assertStorableJson(e.data, `events.${i}.data`);
      assertStorableJson(e.metadata, `events.${i}.metadata`);
    });
    const { version, firstIndex, lastIndex } = await this.streams.append(
      streamId,
      dto.expectedVersion,
      dto.events.map((e) => ({ eventType: e.eventType, schemaVersion: e.schemaVersion, data: e.data, metadata: e.metadata ?? null })),
    );
    return { streamId, version, firstIndex, lastIndex };
  }

  @Get(':streamId')
  @RequireScope('read')
  @ApiQuery({ name: 'fromVersion', required: false, description: 'First version (>= 1, default 1)' })
  @ApiQuery({ name: 'snapshot', required: false, description: 'false = plain events, no snapshot (default true)' })
  @ApiQuery({ name: 'limit', required: false, description: `Most events (1-${MAX_READ}, default ${DEFAULT_READ})` })
  async read(
    @Param('streamId') raw: string,
    @Query('fromVersion') fromRaw?: string,
    @Query('snapshot') snapshotRaw?: string,
    @Query('limit') limitRaw?: string,
  ): Promise<Record<string, unknown>> {
    const streamId = streamIdParam(raw);
    const fromVersion = intParam('fromVersion', fromRaw, 1, 1);
    const snapshot = booleanParam('snapshot', snapshotRaw, true);
    const limit = intParam('limit', limitRaw, DEFAULT_READ, 1, MAX_READ);
    const read = await this.streams.readStream(streamId, { fromVersion, snapshot, limit });
    return {
      streamId,
      version: read.version,
      ...(read.snapshot ? { snapshot: { version: read.snapshot.version, state: read.snapshot.state } } : {}),
      events: read.events.map(toEventResponse),
      count: read.events.length,
    };
  }

  @Get(':streamId/version')
  @RequireScope('read')
  async version(@Param('streamId') raw: string): Promise<{ version: number }> {
    return { version: await this.streams.version(streamIdParam(raw)) };
  }

  @Put(':streamId/snapshot')
  @RequireScope('write')
  @HttpCode(201)
  @ApiResponse({ status: 409, description: '`{error: "snapshot_version_exceeds_stream", version, current}`' })
  async saveSnapshot(@Param('streamId') raw: string, @Body() dto: SaveSnapshotDto): Promise<Record<string, unknown>> {
    const streamId = streamIdParam(raw);
    assertStorableJson(dto.state, 'state');
    const saved = await this.streams.saveSnapshot(streamId, dto.version, dto.state);
    return { streamId, version: saved.version, createdAt: saved.createdAt };
  }

  @Get(':streamId/snapshot')
  @RequireScope('read')
  @ApiResponse({ status: 200, description: '`{streamId, snapshot: {version, state, createdAt} | null}`' })
  async readSnapshot(@Param('streamId') raw: string): Promise<Record<string, unknown>> {
    const streamId = streamIdParam(raw);
    const snapshot = await this.streams.readSnapshot(streamId);
    return { streamId, snapshot: snapshot ? { version: snapshot.version, state: snapshot.state, createdAt: snapshot.createdAt } : null };
  }
}

function toEventResponse(e: StreamEvent): Record<string, unknown> {
  return { version: e.version, index: e.index, eventType: e.eventType, schemaVersion: e.schemaVersion, data: e.data, metadata: e.metadata, createdAt: e.createdAt };
}
