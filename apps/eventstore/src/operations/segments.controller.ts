import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { SegmentArchiver, SegmentKeeper } from '@ordinal/log';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { intParam } from '../events/query-params.js';
import {
  ArchivedDueDto,
  SegmentDto,
  SegmentsDto,
  SegmentVerificationDto,
} from './segments.response.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

const FIRST_INDEX = {
  name: 'firstIndex',
  description: "The segment's first index (GET /api/admin/segments lists them)",
  schema: { type: 'integer', minimum: 1 },
} as const;

/** The log's segments (docs/storage.md): partitions of the messages table by index range, hot or archived. */
@ApiTags('operations')
@ApiTraceHeaders()
@Controller('api/admin/segments')
export class SegmentsController {
  constructor(
    private readonly segments: SegmentKeeper,
    private readonly archiver: SegmentArchiver,
  ) {}

  @Get()
  @Scoped('admin')
  @ApiOperation({
    summary: 'The segments of the log',
    description:
      'Every segment (a partition of the messages table by index range), oldest first: its range, table, tier (hot or archived), size (on disk, or its archive files) and rows. Segments are added ahead of the head as the log grows. Needs the `admin` scope.',
  })
  @ApiOkResponse({ type: SegmentsDto })
  @ApiErrors(503)
  async list(): Promise<SegmentsDto> {
    return { segmentSize: this.segments.segmentSize, segments: await this.segments.list() };
  }

  @Post('archive-due')
  @HttpCode(200)
  @Scoped('admin')
  @ApiOperation({
    summary: 'Archive every segment that is due',
    description:
      'What the schedule (ORDINAL_ARCHIVE_CHECK_MS) does, now: archives every hot segment that is sealed and whose newest message is older than ORDINAL_ARCHIVE_AFTER_MS, oldest first. Needs the `admin` scope.',
  })
  @ApiOkResponse({ type: ArchivedDueDto })
  @ApiErrors(409, 503)
  async archiveDue(): Promise<ArchivedDueDto> {
    return { archived: await this.archiver.archiveDue() };
  }

  @Post(':firstIndex/archive')
  @HttpCode(200)
  @Scoped('admin')
  @ApiParam(FIRST_INDEX)
  @ApiOperation({
    summary: 'Archive a segment',
    description:
      "Exports the segment's rows to the archive store (ORDINAL_ARCHIVE_DIR) as compressed files with a manifest, reads them back, then detaches and drops its table, in one transaction: a crash leaves it hot or archived, never half. The segment must be sealed (below the head and the watermark, nothing watched for late rows, older than ORDINAL_ARCHIVE_AFTER_MS). Readers go on reading it, from the files. Needs the `admin` scope.",
  })
  @ApiQuery({
    name: 'throttlePercent',
    required: false,
    description:
      "The share of its time the archive works: after a chunk that took t ms it rests t × (100 − p) / p ms. Default: the server's ORDINAL_ARCHIVE_THROTTLE_PERCENT (25); 100 is full speed.",
    schema: { type: 'integer', minimum: 1, maximum: 100 },
  })
  @ApiOkResponse({ type: SegmentDto })
  @ApiErrors(400, 404, 409, 503)
  archive(
    @Param('firstIndex') firstIndex: string,
    @Query('throttlePercent') throttleRaw?: string,
  ): Promise<SegmentDto> {
    const throttlePercent =
      throttleRaw === undefined ? undefined : intParam('throttlePercent', throttleRaw, 25, 1, 100);
    return this.archiver.archive(intParam('firstIndex', firstIndex, 0, 1), { throttlePercent });
  }

  @Post(':firstIndex/restore')
  @HttpCode(200)
  @Scoped('admin')
  @ApiParam(FIRST_INDEX)
  @ApiOperation({
    summary: 'Restore an archived segment',
    description:
      'Checks the segment’s files against its manifest, loads them into a new table and attaches it (one transaction). The files stay in the archive store. Needs the `admin` scope.',
  })
  @ApiOkResponse({ type: SegmentDto })
  @ApiErrors(400, 404, 409, 503)
  restore(@Param('firstIndex') firstIndex: string): Promise<SegmentDto> {
    return this.archiver.restore(intParam('firstIndex', firstIndex, 0, 1));
  }

  @Post(':firstIndex/verify')
  @HttpCode(200)
  @Scoped('admin')
  @ApiParam(FIRST_INDEX)
  @ApiOperation({
    summary: 'Check an archived segment’s files',
    description:
      'Reads every file of the archived segment back and checks it against the checksums and row counts of its manifest. `ok` is false, and the bad files are named, when one is missing or corrupt. Needs the `admin` scope.',
  })
  @ApiOkResponse({ type: SegmentVerificationDto })
  @ApiErrors(400, 404, 409, 503)
  verify(@Param('firstIndex') firstIndex: string): Promise<SegmentVerificationDto> {
    return this.archiver.verify(intParam('firstIndex', firstIndex, 0, 1));
  }
}
