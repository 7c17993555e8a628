import { Controller, Get, HttpCode, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { LogScavenger } from '@ordinal/log';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { booleanParam } from '../aggregate-streams/aggregate-stream-params.js';
import { intParam } from '../events/query-params.js';
import { ScavengeRunDto, ScavengeStatusDto } from './scavenge.response.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

/** The scavenge (docs/lifecycle.md): erases in place what deletes and retention rules hide. */
@ApiTags('operations')
@ApiTraceHeaders()
@Controller('api/admin/scavenge')
export class ScavengeController {
  constructor(private readonly scavenger: LogScavenger) {}

  @Post()
  @Scoped('admin')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Run a scavenge',
    description:
      'Erases the body and metadata of every row a delete or a retention rule hides, in place (the row and its index stay, and read back as a `scavenged` tombstone), in bounded batches; resumes a run a crash left unfinished. 202 with the run as it starts (it goes on in the background); `?wait=true`: 200 once it has finished. 409 `scavenge_running` while another runs. Needs the `admin` scope.',
  })
  @ApiQuery({ name: 'wait', required: false, schema: { type: 'boolean', default: false } })
  @ApiQuery({
    name: 'batchSize',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 100000, default: 1000 },
  })
  @ApiQuery({
    name: 'throttlePercent',
    required: false,
    description:
      "The share of its time the run works: after a batch that took t ms it rests t × (100 − p) / p ms. Default: the server's ORDINAL_SCAVENGE_THROTTLE_PERCENT (25); 100 is full speed.",
    schema: { type: 'integer', minimum: 1, maximum: 100 },
  })
  @ApiResponse({ status: 202, type: ScavengeRunDto, description: 'Started' })
  @ApiResponse({ status: 200, type: ScavengeRunDto, description: 'Finished (`wait=true`)' })
  @ApiErrors(400, 409, 421, 503)
  async run(
    @Res({ passthrough: true }) reply: FastifyReply,
    @Query('wait') waitRaw?: string,
    @Query('batchSize') batchRaw?: string,
    @Query('throttlePercent') throttleRaw?: string,
  ): Promise<ScavengeRunDto> {
    const wait = booleanParam('wait', waitRaw, false);
    const batchSize = intParam('batchSize', batchRaw, 1000, 1, 100_000);
    const throttlePercent =
      throttleRaw === undefined ? undefined : intParam('throttlePercent', throttleRaw, 25, 1, 100);
    if (wait) {
      reply.status(200);
      return this.scavenger.run({ batchSize, throttlePercent });
    }
    return (await this.scavenger.start({ batchSize, throttlePercent })).run;
  }

  @Get()
  @Scoped('read')
  @ApiOperation({
    summary: 'Scavenge progress',
    description: 'The run in progress on this server and the newest runs. Needs the `read` scope.',
  })
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
  })
  @ApiOkResponse({ type: ScavengeStatusDto })
  @ApiErrors(400, 503)
  async status(@Query('limit') limitRaw?: string): Promise<ScavengeStatusDto> {
    const limit = intParam('limit', limitRaw, 10, 1, 100);
    return { running: this.scavenger.running, runs: await this.scavenger.runs(limit) };
  }
}
