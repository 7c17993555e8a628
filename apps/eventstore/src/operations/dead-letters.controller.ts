import { Controller, Get, HttpCode, NotFoundException, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../auth/scopes.decorator.js';
import { intParam } from '../events/query-params.js';
import { AmqpInputOffError, DeadLetters } from './dead-letters.service.js';

/** The AMQP input's dead-letter queue: list (without removing) and re-drive to the input. */
@ApiTags('operations')
@ApiBearerAuth()
@Controller('api/dead-letters')
export class DeadLettersController {
  constructor(private readonly deadLetters: DeadLetters) {}

  @Get()
  @RequireScope('admin')
  @ApiQuery({ name: 'limit', required: false, description: 'How many to show (0-1000, default 20); `count` is all of them' })
  @ApiOkResponse({ description: '`{queue, count, messages: [{messageType, userId, headers, body, death}]}`' })
  async list(@Query('limit') limitRaw?: string) {
    const limit = intParam('limit', limitRaw, 20, 0, 1000);
    return this.offAs404(() => this.deadLetters.list(limit));
  }

  @Post('redrive')
  @RequireScope('admin')
  @HttpCode(200)
  @ApiOkResponse({ description: '`{from, to, moved}`: every dead letter present now, back to the input queue' })
  async redrive() {
    return this.offAs404(() => this.deadLetters.redrive());
  }

  private async offAs404<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof AmqpInputOffError) throw new NotFoundException(error.message);
      throw error;
    }
  }
}
