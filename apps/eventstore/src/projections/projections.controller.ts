import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { LogReader } from '@ordinal/log';
import {
  SubscriptionsService,
  WaitTimeoutError,
  type ParkedMessage,
  type ParkedReplay,
  type SubscriptionReport,
} from '@ordinal/subscriptions';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import {
  ParkedListDto,
  ParkedReplayDto,
  ProjectionsResponseDto,
  SubscriptionReportDto,
} from './projections.response.js';
import { intParam, singleParam } from '../events/query-params.js';

const MAX_WAIT_MS = 60_000;

/**
 * Projections and subscriptions of every process on the database: owner, heartbeat age,
 * position, head, lag, state, last error and parked messages of each, the low watermark with
 * the hole it holds; read-your-own-writes with `?atLeast=<index>`; rebuild; parked replay.
 */
@ApiTags('projections')
@Controller('api/projections')
export class ProjectionsController {
  constructor(
    private readonly subscriptions: SubscriptionsService,
    private readonly reader: LogReader,
  ) {}

  @Get()
  @Scoped('read')
  @ApiOperation({
    summary: 'Projections, subscriptions and the low watermark',
    description:
      'Every consumer any process on the database registered: owner, heartbeat age, position, head, lag, state, last error, parked count, partitions. Needs the `read` scope.',
  })
  @ApiQuery({
    name: 'atLeast',
    required: false,
    description: 'Wait until every projection and subscription has applied this index',
    schema: { type: 'integer', minimum: 0 },
  })
  @ApiQuery({
    name: 'timeoutMs',
    required: false,
    description: 'Longest wait; `reached` says whether it was',
    schema: { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS, default: 5000 },
  })
  @ApiOkResponse({ type: ProjectionsResponseDto })
  @ApiErrors(400, 503)
  async list(
    @Query('atLeast') atLeastRaw?: string,
    @Query('timeoutMs') timeoutRaw?: string,
  ): Promise<Record<string, unknown>> {
    const names = atLeastRaw ? (await this.subscriptions.report()).map((r) => r.name) : [];
    const reached = await this.wait(names, atLeastRaw, timeoutRaw);
    const projections = await this.subscriptions.report();
    return {
      ...(reached === null ? {} : { reached }),
      projections,
      watermark: await this.reader.watermarkStatus(),
    };
  }

  @Get(':name')
  @Scoped('read')
  @ApiOperation({
    summary: 'One projection or subscription',
    description: 'Needs the `read` scope.',
  })
  @ApiParam({ name: 'name', schema: { type: 'string' } })
  @ApiQuery({
    name: 'atLeast',
    required: false,
    description: 'Wait until this projection has applied this index',
    schema: { type: 'integer', minimum: 0 },
  })
  @ApiQuery({
    name: 'timeoutMs',
    required: false,
    description: 'Longest wait',
    schema: { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS, default: 5000 },
  })
  @ApiOkResponse({ type: SubscriptionReportDto })
  @ApiErrors(400, 404, 409, 503)
  async one(
    @Param('name') name: string,
    @Query('atLeast') atLeastRaw?: string,
    @Query('timeoutMs') timeoutRaw?: string,
  ): Promise<SubscriptionReport & { reached?: boolean }> {
    await this.subscriptions.report(name);
    const reached = await this.wait([name], atLeastRaw, timeoutRaw);
    const [report] = await this.subscriptions.report(name);
    return { ...report, ...(reached === null ? {} : { reached }) };
  }

  @Post(':name/rebuild')
  @Scoped('admin')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Rebuild a projection',
    description:
      'Clears the read model and resets the checkpoint; the replay runs in the background, in whichever process owns it (409 when none does). Needs the `admin` scope.',
  })
  @ApiParam({ name: 'name', schema: { type: 'string' } })
  @ApiResponse({
    status: 202,
    type: SubscriptionReportDto,
    description: 'Read model cleared, checkpoint reset; replay runs in the background',
  })
  @ApiErrors(404, 409, 421, 503)
  async rebuild(@Param('name') name: string): Promise<SubscriptionReport> {
    await this.subscriptions.rebuild(name);
    const [report] = await this.subscriptions.report(name);
    return report;
  }

  @Get(':name/parked')
  @Scoped('read')
  @ApiOperation({
    summary: 'Parked messages of a projection',
    description:
      'The messages its `park` error policy set aside, oldest first, with error and position. Needs the `read` scope.',
  })
  @ApiParam({ name: 'name', schema: { type: 'string' } })
  @ApiOkResponse({ type: ParkedListDto })
  @ApiErrors(404, 503)
  async parked(@Param('name') name: string): Promise<{ name: string; parked: ParkedMessage[] }> {
    return { name, parked: await this.subscriptions.listParked(name) };
  }

  @Post(':name/parked/replay')
  @Scoped('admin')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Replay parked messages',
    description:
      'Applies them again through the upcasters, oldest first, up to the first that fails again, in the process that owns the projection (409 when none does). Needs the `admin` scope.',
  })
  @ApiParam({ name: 'name', schema: { type: 'string' } })
  @ApiOkResponse({ type: ParkedReplayDto })
  @ApiErrors(404, 409, 421, 503)
  async replayParked(@Param('name') name: string): Promise<{ name: string } & ParkedReplay> {
    return { name, ...(await this.subscriptions.replayParked(name)) };
  }

  /** Waits for every named subscription to reach `atLeast`; null when not asked to wait. */
  private async wait(
    names: string[],
    atLeastRaw: string | undefined,
    timeoutRaw: string | undefined,
  ): Promise<boolean | null> {
    const atLeastText = singleParam('atLeast', atLeastRaw);
    if (atLeastText === undefined || atLeastText === '') return null;
    const atLeast = intParam('atLeast', atLeastText, 0, 0);
    const timeoutMs = intParam('timeoutMs', timeoutRaw, 5000, 0, MAX_WAIT_MS);
    try {
      await Promise.all(names.map((name) => this.subscriptions.waitFor(name, atLeast, timeoutMs)));
      return true;
    } catch (error) {
      if (error instanceof WaitTimeoutError) return false;
      throw error;
    }
  }
}
