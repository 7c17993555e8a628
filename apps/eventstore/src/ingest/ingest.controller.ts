import { AccessPolicy } from '../access/access-policy.service.js';
import { CurrentPrincipal, CurrentTenant } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import {
  BadRequestException,
  Body,
  Controller,
  Headers,
  HttpCode,
  Inject,
  Post,
  Put,
  Req,
  Res,
  UnprocessableEntityException,
} from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requestCorrelation } from '../tracing/request-correlation.js';
import { LogWriter, type AppendEntry, type NewMessage } from '@ordinal/log';
import { isSameRequest } from './same-request.js';
import { PublishMessageDto } from './dto/publish-message.dto.js';
import { PublishBatchDto } from './dto/publish-batch.dto.js';
import { statusOf, toEntryResponse, toStoredResponse } from './message-response.js';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { MessageResponseDto } from './dto/message.response.js';
import {
  BatchResponseDto,
  DuplicateResponseDto,
  type BatchEntryDto,
} from './dto/publish.responses.js';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

function toNewMessage(dto: PublishMessageDto, idempotencyKey?: string): NewMessage {
  return {
    messageType: dto.messageType,
    userId: dto.userId ?? null,
    body: dto.content,
    metadata: dto.metadata ?? null,
    idempotencyKey: idempotencyKey ?? dto.idempotencyKey ?? null,
    // Absent: the request's correlation (request-correlation.ts) decides.
    correlationId: dto.correlationId ?? null,
    causationId: dto.causationId ?? null,
  };
}

/** 422: the key stored another message; where it is only for a principal that may read it. */
function keyReused(key: string, index: number | null): UnprocessableEntityException {
  const where = index === null ? '' : ` (stored at index ${index})`;
  return new UnprocessableEntityException({
    message: `Idempotency key '${key}' was used for a different message${where}; send a new key for a new message`,
    code: 'idempotency_key_reused',
    ...(index === null ? {} : { id: index }),
  });
}

/** REST ingestion, one message or a batch: every message gets the next global index. */
@ApiTags('ingestion')
@ApiTraceHeaders()
@Controller('api/events')
export class IngestController {
  constructor(
    private readonly writer: LogWriter,
    @Inject(ORDINAL_CONFIG) private readonly config: OrdinalConfig,
    private readonly access: AccessPolicy,
  ) {}

  @Put('message')
  @Scoped('write', 'header')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Publish one message',
    description:
      "Stores the message at the next global index, for the request's tenant if it has one (docs/tenants.md). Needs the `write` scope.",
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: '1-200 characters; the same as the `idempotencyKey` field',
    schema: { type: 'string', minLength: 1, maxLength: 200 },
  })
  @ApiResponse({
    status: 201,
    type: MessageResponseDto,
    description: 'Stored; the body is the stored message, `id` its index',
  })
  @ApiResponse({
    status: 200,
    type: MessageResponseDto,
    description: 'Idempotency-key repeat of the same request; the original message',
  })
  @ApiResponse({
    status: 202,
    type: DuplicateResponseDto,
    description: 'Duplicate inside the duplicate window; nothing stored',
  })
  @ApiErrors(400, 408, 413, 415, 421, 422, 503, 507)
  async publish(
    @Body() dto: PublishMessageDto,
    @Headers('idempotency-key') headerKey: string | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
  ): Promise<MessageResponseDto | DuplicateResponseDto> {
    if (headerKey !== undefined && (headerKey.length === 0 || headerKey.length > 200)) {
      throw new BadRequestException('Idempotency-Key must be 1-200 characters');
    }
    if (headerKey && dto.idempotencyKey && headerKey !== dto.idempotencyKey) {
      throw new BadRequestException(
        'idempotencyKey and the Idempotency-Key header differ; send one',
      );
    }
    const sent = toNewMessage(dto, headerKey);
    this.access.assertWrite(principal, [sent]);
    const { entries } = await this.writer.append({
      messages: [sent],
      correlation: requestCorrelation(request),
      // The request's tenant (docs/tenants.md): the writer stores its names in its namespace.
      ...(tenant === undefined ? {} : { tenant }),
    });
    const entry = entries[0];
    if (entry.status === 'repeat' && !isSameRequest(entry.message, sent))
      throw keyReused(
        entry.message.idempotencyKey!,
        this.access.mayRead(principal, entry.message) ? entry.message.id : null,
      );
    reply.status(statusOf(entries));
    if (entry.status === 'duplicate') {
      return {
        status: 'duplicate',
        contentHash: entry.contentHash,
        message: 'A message with the same body is inside the duplicate window; nothing was stored',
      };
    }
    return toStoredResponse(entry.message);
  }

  @Post('messages')
  @Scoped('write', 'header')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Publish a batch atomically',
    description:
      'Up to ORDINAL_MAX_BATCH messages (default 1,000; more is a 400 naming the limit), stored in one transaction with contiguous indices; one entry per message in the answer. Needs the `write` scope.',
  })
  @ApiResponse({ status: 201, type: BatchResponseDto, description: 'Something was stored' })
  @ApiResponse({ status: 200, type: BatchResponseDto, description: 'Only idempotency-key repeats' })
  @ApiResponse({ status: 202, type: BatchResponseDto, description: 'Only window duplicates' })
  @ApiResponse({
    status: 422,
    type: BatchResponseDto,
    description:
      'Nothing stored and an idempotency key reused with another message (entry `key_reused`)',
  })
  @ApiErrors(400, 408, 413, 415, 421, 422, 503, 507)
  async publishBatch(
    @Body() dto: PublishBatchDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @CurrentPrincipal() principal: Principal,
    @CurrentTenant() tenant: string | undefined,
  ): Promise<BatchResponseDto> {
    if (dto.messages.length > this.config.maxBatchMessages) {
      throw new BadRequestException(
        `messages: at most ${this.config.maxBatchMessages} messages in one batch (ORDINAL_MAX_BATCH), got ${dto.messages.length}; split the batch`,
      );
    }
    const sent = dto.messages.map((m) => toNewMessage(m));
    this.access.assertWrite(principal, sent);
    const { entries } = await this.writer.append({
      messages: sent,
      correlation: requestCorrelation(request),
      // The request's tenant (docs/tenants.md): the writer stores its names in its namespace.
      ...(tenant === undefined ? {} : { tenant }),
    });
    // Entries committed beside a reused key stay committed: that entry alone says so.
    const reused = entries.map(
      (e, i) => e.status === 'repeat' && !isSameRequest(e.message, sent[i]),
    );
    const status = statusOf(entries);
    reply.status(status !== 201 && reused.some(Boolean) ? 422 : status);
    return {
      count: entries.length,
      messages: entries.map<BatchEntryDto>((e: AppendEntry, i) => {
        if (!reused[i] || e.status !== 'repeat') return toEntryResponse(e);
        // The message stored under the key is shown only to a principal that may read it.
        const shown = this.access.mayRead(principal, e.message) ? toEntryResponse(e) : {};
        return { ...shown, status: 'key_reused', code: 'idempotency_key_reused' };
      }),
    };
  }
}
