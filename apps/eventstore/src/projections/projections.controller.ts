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
import { ProjectionsService } from '@ordinal/projections';
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
  RetiredVersionDto,
  SubscriptionReportDto,
} from './projections.response.js';
import { intParam, singleParam } from '../events/query-params.js';
import { parameterError } from '../errors/parameter-errors.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

const MAX_WAIT_MS = 60_000;

/**
 * Projections and subscriptions of every process on the database: owner, heartbeat age,
 * position, head, lag, state, last error and parked messages of each, the low watermark with
 * the hole it holds; read-your-own-writes with `?atLeast=<index>`; rebuild; parked replay.
 */
@ApiTags('projections')
@ApiTraceHeaders()
@Controller('api/projections')
export class ProjectionsController {
  constructor(
    private readonly subscriptions: SubscriptionsService,
    private readonly projections: ProjectionsService,
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
    // A candidate (or a previous build) is not what readers get: the wait is for the serving builds.
    const names = atLeastRaw
      ? (await this.projections.annotate(await this.subscriptions.report()))
          .filter((r) => r.versionState === undefined || r.versionState === 'serving')
          .map((r) => r.name)
      : [];
    const reached = await this.wait(names, atLeastRaw, timeoutRaw);
    const projections = await this.projections.annotate(await this.subscriptions.report());
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
    await this.projections.describe(name);
    const reached = await this.wait([name], atLeastRaw, timeoutRaw);
    const report = await this.projections.describe(name);
    return { ...report, ...(reached === null ? {} : { reached }) };
  }

  @Post(':name/versions/:version/promote')
  @Scoped('admin')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Promote a projection version',
    description:
      'In one transaction, the views named after the read-model tables point at this version’s candidate build (or its previous one); the serving version becomes `previous` and stops at its position. Of two racing promotions exactly one wins: the other gets 409 projection_version_conflict. Needs the `admin` scope.',
  })
  @ApiParam({ name: 'name', schema: { type: 'string' } })
  @ApiParam({ name: 'version', schema: { type: 'integer', minimum: 1 } })
  @ApiOkResponse({
    type: SubscriptionReportDto,
    description: 'The projection, its new serving version and every build',
  })
  @ApiErrors(400, 404, 409, 503)
  async promote(
    @Param('name') name: string,
    @Param('version') versionRaw: string,
  ): Promise<SubscriptionReport> {
    await this.projections.promote(name, intParam('version', versionRaw, 1, 1));
    return this.projections.describe(name);
  }

  @Post(':name/rollback')
  @Scoped('admin')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Roll a projection back to its previous version',
    description:
      'Points readers back at the latest previous version while its tables are kept (409 projection_version_conflict when there is none). Needs the `admin` scope.',
  })
  @ApiParam({ name: 'name', schema: { type: 'string' } })
  @ApiOkResponse({ type: SubscriptionReportDto })
  @ApiErrors(404, 409, 503)
  async rollback(@Param('name') name: string): Promise<SubscriptionReport> {
    await this.projections.rollback(name);
    return this.projections.describe(name);
  }

  @Post(':name/versions/:version/retire')
  @Scoped('admin')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Retire a projection version',
    description:
      'Drops the tables (exactly the schemas) of this version’s builds that do not serve, and their checkpoints and parked messages; never done automatically. 409 projection_version_conflict for the serving version. Needs the `admin` scope.',
  })
  @ApiParam({ name: 'name', schema: { type: 'string' } })
  @ApiParam({ name: 'version', schema: { type: 'integer', minimum: 1 } })
  @ApiOkResponse({ type: RetiredVersionDto })
  @ApiErrors(400, 404, 409, 503)
  async retire(
    @Param('name') name: string,
    @Param('version') versionRaw: string,
  ): Promise<RetiredVersionDto> {
    const version = intParam('version', versionRaw, 1, 1);
    return { name, version, dropped: await this.projections.retire(name, version) };
  }

  @Post(':name/rebuild')
  @Scoped('admin')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Rebuild a projection',
    description:
      'Blue/green by default: a new build of the serving version replays beside it (a `candidate` in `versions`) and replaces it on promotion, readers keep the full model meanwhile. With `mode=in-place` (and for a projection whose tables the framework does not know): clears the read model and resets the checkpoint, readers see it fill up. Either runs in whichever process owns the projection (409 when none does). Needs the `admin` scope.',
  })
  @ApiParam({ name: 'name', schema: { type: 'string' } })
  @ApiQuery({
    name: 'mode',
    required: false,
    schema: { type: 'string', enum: ['blue-green', 'in-place'], default: 'blue-green' },
  })
  @ApiResponse({
    status: 202,
    type: SubscriptionReportDto,
    description:
      'The new build started (or, in place, read model cleared and checkpoint reset); replay runs in the background',
  })
  @ApiErrors(400, 404, 409, 421, 503)
  async rebuild(
    @Param('name') name: string,
    @Query('mode') modeRaw?: string,
  ): Promise<SubscriptionReport> {
    const mode = singleParam('mode', modeRaw) ?? 'blue-green';
    if (mode !== 'blue-green' && mode !== 'in-place')
      throw parameterError(
        'mode',
        `mode must be 'blue-green' (the default) or 'in-place', got '${mode}'`,
      );
    await this.projections.rebuild(name, { mode });
    return this.projections.describe(name);
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
      await Promise.all(names.map((name) => this.projections.waitFor(name, atLeast, timeoutMs)));
      return true;
    } catch (error) {
      if (error instanceof WaitTimeoutError) return false;
      throw error;
    }
  }
}
