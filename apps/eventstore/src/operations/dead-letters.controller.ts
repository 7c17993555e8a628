import {
  Controller,
  Get,
  HttpCode,
  NotFoundException,
  Optional,
  Post,
  Query,
} from '@nestjs/common';
import { AmqpInputOffError, DeadLetters } from '@ordinal/amqp';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { DeadLettersResponseDto, RedriveResponseDto } from './operations.response.js';
import { intParam } from '../events/query-params.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

/** The AMQP input's dead-letter queue: list (without removing) and re-drive to the input. */
@ApiTags('operations')
@ApiTraceHeaders()
@Controller('api/dead-letters')
export class DeadLettersController {
  /** Absent when the server runs without AMQP (no AMQP_URL). */
  constructor(@Optional() private readonly deadLetters?: DeadLetters) {}

  @Get()
  @Scoped('admin')
  @ApiOperation({
    summary: "The AMQP input's dead letters",
    description:
      'Lists them without removing them. Needs the `admin` scope; 404 when the server runs without AMQP input.',
  })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: 'How many to show; `count` is all of them',
    schema: { type: 'integer', minimum: 0, maximum: 1000, default: 20 },
  })
  @ApiOkResponse({ type: DeadLettersResponseDto })
  @ApiErrors(400, 404, 503)
  async list(@Query('limit') limitRaw?: string) {
    const limit = intParam('limit', limitRaw, 20, 0, 1000);
    return this.offAs404((deadLetters) => deadLetters.list(limit));
  }

  @Post('redrive')
  @Scoped('admin')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Re-drive the dead letters to the input queue',
    description:
      'Every dead letter present now goes back to the input queue. Needs the `admin` scope.',
  })
  @ApiOkResponse({ type: RedriveResponseDto })
  @ApiErrors(404, 503)
  async redrive() {
    return this.offAs404((deadLetters) => deadLetters.redrive());
  }

  private async offAs404<T>(run: (deadLetters: DeadLetters) => Promise<T>): Promise<T> {
    if (!this.deadLetters) throw new NotFoundException(new AmqpInputOffError().message);
    try {
      return await run(this.deadLetters);
    } catch (error) {
      if (error instanceof AmqpInputOffError) throw new NotFoundException(error.message);
      throw error;
    }
  }
}
