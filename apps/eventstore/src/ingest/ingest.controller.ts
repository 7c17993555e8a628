import { BadRequestException, Body, Controller, Headers, HttpCode, Inject, Post, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { LogWriter, type NewMessage } from '@ordinal/log';
import { PublishMessageDto } from './dto/publish-message.dto.js';
import { PublishBatchDto } from './dto/publish-batch.dto.js';
import { statusOf, toEntryResponse, toMessageResponse } from './message-response.js';
import { RequireScope } from '../auth/scopes.decorator.js';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';

function toNewMessage(dto: PublishMessageDto, idempotencyKey?: string): NewMessage {
  return {
    messageType: dto.messageType,
    userId: dto.userId ?? null,
    body: dto.content,
    metadata: dto.metadata ?? null,
    idempotencyKey: idempotencyKey ?? dto.idempotencyKey ?? null,
  };
}

/** REST ingestion, one message or a batch: every message gets the next global index. */
@ApiTags('ingestion')
@ApiBearerAuth()
@Controller('api/events')
export class IngestController {
  constructor(
    private readonly writer: LogWriter,
    @Inject(ORDINAL_CONFIG) private readonly config: OrdinalConfig,
  ) {}

  @Put('message')
  @RequireScope('write')
  @HttpCode(201)
  @ApiHeader({ name: 'Idempotency-Key', required: false })
  @ApiResponse({ status: 201, description: 'Stored; the body is the stored message, `id` its index' })
  @ApiResponse({ status: 200, description: 'Idempotency-key repeat; the original message' })
  @ApiResponse({ status: 202, description: 'Duplicate inside the duplicate window; nothing stored' })
  async publish(
    @Body() dto: PublishMessageDto,
    @Headers('idempotency-key') headerKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Record<string, unknown>> {
    if (headerKey !== undefined && (headerKey.length === 0 || headerKey.length > 200)) {
      throw new BadRequestException('Idempotency-Key must be 1-200 characters');
    }
    if (headerKey && dto.idempotencyKey && headerKey !== dto.idempotencyKey) {
      throw new BadRequestException('idempotencyKey and the Idempotency-Key header differ; send one');
    }
    const { entries } = await this.writer.append({ messages: [toNewMessage(dto, headerKey)] });
    const entry = entries[0];
    reply.status(statusOf(entries));
    if (entry.status === 'duplicate') {
      return { status: 'duplicate', contentHash: entry.contentHash, message: 'A message with the same body is inside the duplicate window; nothing was stored' };
    }
    return toMessageResponse(entry.message);
  }

  @Post('messages')
  @RequireScope('write')
  @HttpCode(201)
  @ApiResponse({ status: 201, description: 'Stored atomically with contiguous indices' })
  async publishBatch(@Body() dto: PublishBatchDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<Record<string, unknown>> {
    if (dto.messages.length > this.config.maxBatchMessages) {
      throw new BadRequestException(`messages: at most ${this.config.maxBatchMessages} messages in one batch (ORDINAL_MAX_BATCH), got ${dto.messages.length}; split the batch`);
    }
    const { entries } = await this.writer.append({ messages: dto.messages.map((m) => toNewMessage(m)) });
    reply.status(statusOf(entries));
    return { count: entries.length, messages: entries.map(toEntryResponse) };
  }
}
