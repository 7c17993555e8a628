import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { MetricsService } from './metrics.service.js';
import { Public } from '../auth/scopes.decorator.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

/** Prometheus text exposition. Public: it carries figures, no data. */
@ApiTags('operations')
@ApiTraceHeaders()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Public()
  @ApiOperation({
    summary: 'Prometheus metrics',
    description:
      'Text exposition format 0.0.4; every metric is in docs/operations.md. No token needed.',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({
    content: { 'text/plain': { schema: { type: 'string' } } },
    description: 'The metrics',
  })
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  async scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
