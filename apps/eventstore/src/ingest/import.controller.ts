import {
  Controller,
  HttpCode,
  Inject,
  Post,
  Req,
  Res,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { requestCorrelation } from '../tracing/request-correlation.js';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { ImportIdleError, LogImporter } from '@ordinal/log';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
import { NDJSON } from '../validation/body-timeout.hook.js';
import { ImportResponseDto } from './dto/import.response.js';
import type { HttpErrorCode } from '@ordinal/contract';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

/** Bulk import: an NDJSON body streamed into the log through COPY (docs/ingestion.md, "Bulk import"). */
@ApiTags('ingestion')
@ApiTraceHeaders()
@Controller('api/events')
export class ImportController {
  constructor(
    private readonly importer: LogImporter,
    @Inject(ORDINAL_CONFIG) private readonly config: OrdinalConfig,
  ) {}

  @Post('import')
  @Scoped('admin')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Import messages in bulk (NDJSON)',
    description:
      'One message a line, as `POST /api/events/messages` takes them (`{"messageType", "content", "userId"?, "metadata"?, "idempotencyKey"?, "correlationId"?, "causationId"?}`), ' +
      "sent as `application/x-ndjson` and read as it arrives. A line without a `correlationId` takes the request's correlation " +
      '(`X-Correlation-Id`, else the `traceparent` trace id, else one new UUID for the import). Everything is stored in one transaction with one contiguous range of indices, ' +
      'or nothing: a bad line is a 400 naming it (`line`). Other writers wait while an import runs; an import whose body sends nothing for `ORDINAL_IMPORT_IDLE_TIMEOUT_MS` (10 s) is rolled back and answered 408 `import_idle_timeout`. The duplicate window does not apply; ' +
      'a line whose idempotency key is already stored for the same message is skipped (`repeats`), one stored for another message is a 422. Needs the `admin` scope.',
  })
  @ApiConsumes(NDJSON)
  @ApiBody({
    schema: {
      type: 'string',
      example: '{"messageType":"OrderPlaced","content":{"orderId":"o-1"}}\n',
    },
  })
  @ApiResponse({ status: 201, type: ImportResponseDto, description: 'Stored: `first..last`' })
  @ApiResponse({
    status: 200,
    type: ImportResponseDto,
    description: 'Nothing new: every line was an idempotency-key repeat',
  })
  @ApiErrors(400, 408, 415, 421, 422, 503, 507)
  async import(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ImportResponseDto> {
    const body = request.body;
    if (!(body instanceof Readable)) {
      throw new UnsupportedMediaTypeException({
        message: `Send the lines with Content-Type: ${NDJSON} (one JSON message a line)`,
        code: 'unsupported_media_type' satisfies HttpErrorCode,
      });
    }
    const result = await this.importer
      .import(body, {
        maxLineBytes: this.config.bodyLimitBytes,
        correlation: requestCorrelation(request),
        idleTimeoutMs: this.config.importIdleTimeoutMs,
      })
      .catch((error: unknown) => {
        // The client paused mid-body: what it may still send is not wanted.
        if (error instanceof ImportIdleError) void reply.header('connection', 'close');
        throw error;
      });
    if (result.imported === 0) reply.status(200);
    return result;
  }
}
