import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { intParam } from '../events/query-params.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';
import {
  DASHBOARD_SAMPLE_MS,
  DASHBOARD_WINDOW_MS,
  DashboardSampler,
} from './dashboard-sampler.service.js';
import { DashboardResponseDto } from './dashboard.response.js';

/** The figures the console's dashboard draws, sampled every second by this server process. */
@ApiTags('operations')
@ApiTraceHeaders()
@Controller('api/dashboard')
export class DashboardController {
  constructor(private readonly sampler: DashboardSampler) {}

  @Get()
  @Scoped('read')
  @ApiOperation({
    summary: 'Samples for the dashboard',
    description:
      "The head, the safe head, the ingest rate, the held hole and every consumer's lag, sampled every second by the answering process and kept for its last 10 minutes (in memory: another process, or a restart, has its own history). `since` returns only the samples taken after it. Needs the `read` scope.",
  })
  @ApiQuery({
    name: 'since',
    required: false,
    description: 'Only samples taken after this time (ms since the epoch, an earlier `at`)',
    schema: { type: 'integer', minimum: 0 },
  })
  @ApiOkResponse({ type: DashboardResponseDto })
  @ApiErrors(400)
  samples(@Query('since') sinceRaw?: string): DashboardResponseDto {
    const since =
      sinceRaw === undefined
        ? undefined
        : intParam('since', sinceRaw, 0, 0, Number.MAX_SAFE_INTEGER);
    return {
      sampleMs: DASHBOARD_SAMPLE_MS,
      windowMs: DASHBOARD_WINDOW_MS,
      ordering: this.sampler.ordering,
      samples: this.sampler.samples(since),
    };
  }
}
