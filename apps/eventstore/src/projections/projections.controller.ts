import { Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { LogReader, LogWatermark } from '@ordinal/log';
import { LOG_MODULE_OPTIONS, type ResolvedLogOptions } from '@ordinal/log/internal';
import { SubscriptionsService, WaitTimeoutError, type ParkedMessage, type SubscriptionReport } from '@ordinal/subscriptions';
import { RequireScope } from '../auth/scopes.decorator.js';
import { intParam } from '../events/query-params.js';
import { watermarkStatus } from './watermark-status.js';

const MAX_WAIT_MS = 60_000;

/**
 * Projections and subscriptions of every process on the database: owner, heartbeat age,
 * position, head, lag, state, last error and parked messages of each, the low watermark with
 * the hole it holds; read-your-own-writes with `?atLeast=<index>`; rebuild; parked replay.
 */
@ApiTags('projections')
@ApiBearerAuth()
@Controller('api/projections')
export class ProjectionsController {
  constructor(
    private readonly subscriptions: SubscriptionsService,
    private readonly reader: LogReader,
    private readonly watermark: LogWatermark,
    @Inject(LOG_MODULE_OPTIONS) private readonly logOptions: ResolvedLogOptions,
  ) {}

  @Get()
  @RequireScope('read')
  @ApiQuery({ name: 'atLeast', required: false, description: 'Wait until every projection and subscription has applied this index' })
  @ApiQuery({ name: 'timeoutMs', required: false, description: `Longest wait (0-${MAX_WAIT_MS}, default 5000); \`reached\` says whether it was` })
  async list(@Query('atLeast') atLeastRaw?: string, @Query('timeoutMs') timeoutRaw?: string): Promise<Record<string, unknown>> {
    const names = atLeastRaw ? (await this.subscriptions.report()).map((r) => r.name) : [];
    const reached = await this.wait(names, atLeastRaw, timeoutRaw);
    const projections = await this.subscriptions.report();
    return { ...(reached === null ? {} : { reached }), projections, watermark: await watermarkStatus(this.reader, this.watermark, this.logOptions) };
  }

  @Get(':name')
  @RequireScope('read')
  @ApiQuery({ name: 'atLeast', required: false, description: 'Wait until this projection has applied this index' })
  @ApiQuery({ name: 'timeoutMs', required: false, description: `Longest wait (0-${MAX_WAIT_MS}, default 5000)` })
  @ApiResponse({ status: 404, description: 'No projection or subscription of that name' })
  async one(@Param('name') name: string, @Query('atLeast') atLeastRaw?: string, @Query('timeoutMs') timeoutRaw?: string): Promise<SubscriptionReport & { reached?: boolean }> {
    await this.subscriptions.report(name);
    const reached = await this.wait([name], atLeastRaw, timeoutRaw);
    const [report] = await this.subscriptions.report(name);
    return { ...report, ...(reached === null ? {} : { reached }) };
  }

  @Post(':name/rebuild')
  @RequireScope('admin')
  @HttpCode(202)
  @ApiResponse({ status: 202, description: 'Read model cleared, checkpoint reset; replay runs in the background' })
  async rebuild(@Param('name') name: string): Promise<SubscriptionReport> {
    await this.subscriptions.rebuild(name);
    const [report] = await this.subscriptions.report(name);
    return report;
  }

  @Get(':name/parked')
  @RequireScope('read')
  @ApiResponse({ status: 200, description: 'The messages its `park` error policy set aside, oldest first, with error and position' })
  async parked(@Param('name') name: string): Promise<{ name: string; parked: ParkedMessage[] }> {
    return { name, parked: await this.subscriptions.listParked(name) };
  }

  @Post(':name/parked/replay')
  @RequireScope('admin')
  @HttpCode(200)
  @ApiResponse({ status: 200, description: 'Parked messages applied again, oldest first, up to the first that fails again' })
  async replayParked(@Param('name') name: string): Promise<{ name: string; replayed: number; remaining: number; error: string | null }> {
    return { name, ...(await this.subscriptions.replayParked(name)) };
  }

  /** Waits for every named subscription to reach `atLeast`; null when not asked to wait. */
  private async wait(names: string[], atLeastRaw: string | undefined, timeoutRaw: string | undefined): Promise<boolean | null> {
    if (atLeastRaw === undefined || atLeastRaw === '') return null;
    const atLeast = intParam('atLeast', atLeastRaw, 0, 0);
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
