import { Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { LogReader, LogWatermark } from '@ordinal/log';
import { LOG_MODULE_OPTIONS, type ResolvedLogOptions } from '@ordinal/log/internal';
import { SubscriptionsService, WaitTimeoutError, type SubscriptionReport } from '@ordinal/subscriptions';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { ProjectionsResponseDto, SubscriptionReportDto } from './projections.response.js';
import { intParam, singleParam } from '../events/query-params.js';
import { watermarkStatus } from './watermark-status.js';

const MAX_WAIT_MS = 60_000;

/**
 * Projections and subscriptions running in this server: position, head, lag, state and
 * last error of each, the low watermark with the hole it holds; read-your-own-writes with
 * `?atLeast=<index>`; rebuild.
 */
@ApiTags('projections')
@Controller('api/projections')
export class ProjectionsController {
  constructor(
    private readonly subscriptions: SubscriptionsService,
    private readonly reader: LogReader,
    private readonly watermark: LogWatermark,
    @Inject(LOG_MODULE_OPTIONS) private readonly logOptions: ResolvedLogOptions,
  ) {}

  @Get()
  @Scoped('read')
  @ApiOperation({ summary: 'Projections, subscriptions and the low watermark', description: 'Position, head, lag and state of each. Needs the `read` scope.' })
  @ApiQuery({ name: 'atLeast', required: false, description: 'Wait until every projection and subscription has applied this index', schema: { type: 'integer', minimum: 0 } })
  @ApiQuery({ name: 'timeoutMs', required: false, description: 'Longest wait; `reached` says whether it was', schema: { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS, default: 5000 } })
  @ApiOkResponse({ type: ProjectionsResponseDto })
  @ApiErrors(400, 503)
  async list(@Query('atLeast') atLeastRaw?: string, @Query('timeoutMs') timeoutRaw?: string): Promise<Record<string, unknown>> {
    const reached = await this.wait(this.subscriptions.names(), atLeastRaw, timeoutRaw);
    const projections = await this.subscriptions.report();
    return { ...(reached === null ? {} : { reached }), projections, watermark: await watermarkStatus(this.reader, this.watermark, this.logOptions) };
  }

  @Get(':name')
  @Scoped('read')
  @ApiOperation({ summary: 'One projection or subscription', description: 'Needs the `read` scope.' })
  @ApiParam({ name: 'name', schema: { type: 'string' } })
  @ApiQuery({ name: 'atLeast', required: false, description: 'Wait until this projection has applied this index', schema: { type: 'integer', minimum: 0 } })
  @ApiQuery({ name: 'timeoutMs', required: false, description: 'Longest wait', schema: { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS, default: 5000 } })
  @ApiOkResponse({ type: SubscriptionReportDto })
  @ApiErrors(400, 404, 503)
  async one(@Param('name') name: string, @Query('atLeast') atLeastRaw?: string, @Query('timeoutMs') timeoutRaw?: string): Promise<SubscriptionReport & { reached?: boolean }> {
    this.subscriptions.get(name);
    const reached = await this.wait([name], atLeastRaw, timeoutRaw);
    const [report] = await this.subscriptions.report(name);
    return { ...report, ...(reached === null ? {} : { reached }) };
  }

  @Post(':name/rebuild')
  @Scoped('admin')
  @HttpCode(202)
  @ApiOperation({ summary: 'Rebuild a projection', description: 'Clears the read model and resets the checkpoint; the replay runs in the background. Needs the `admin` scope.' })
  @ApiParam({ name: 'name', schema: { type: 'string' } })
  @ApiResponse({ status: 202, type: SubscriptionReportDto, description: 'Read model cleared, checkpoint reset; replay runs in the background' })
  @ApiErrors(404, 503)
  async rebuild(@Param('name') name: string): Promise<SubscriptionReport> {
    await this.subscriptions.rebuild(name);
    const [report] = await this.subscriptions.report(name);
    return report;
  }

  /** Waits for every named subscription to reach `atLeast`; null when not asked to wait. */
  private async wait(names: string[], atLeastRaw: string | undefined, timeoutRaw: string | undefined): Promise<boolean | null> {
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
