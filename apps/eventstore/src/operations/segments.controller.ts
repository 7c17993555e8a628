import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SegmentKeeper } from '@ordinal/log';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { SegmentsDto } from './segments.response.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

/** The log's segments (docs/storage.md): partitions of the messages table by index range. */
@ApiTags('operations')
@ApiTraceHeaders()
@Controller('api/admin/segments')
export class SegmentsController {
  constructor(private readonly segments: SegmentKeeper) {}

  @Get()
  @Scoped('admin')
  @ApiOperation({
    summary: 'The segments of the log',
    description:
      'Every segment (a partition of the messages table by index range), oldest first: its range, table, tier, size on disk and estimated rows. Segments are added ahead of the head as the log grows. Needs the `admin` scope.',
  })
  @ApiOkResponse({ type: SegmentsDto })
  @ApiErrors(503)
  async list(): Promise<SegmentsDto> {
    return { segmentSize: this.segments.segmentSize, segments: await this.segments.list() };
  }
}
