import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { OrdinalMessage } from '@ordinal/log';
import { JSON_CONTAINER_SCHEMA } from '../../openapi/json-value.js';

/**
 * A stored message as every reader gives it: `id` is its global index. The contract's
 * `OrdinalMessage`; `openapi/client-contract.ts` checks that the keys are the same both ways.
 */
export class MessageResponseDto implements OrdinalMessage {
  @ApiProperty({ type: 'integer', minimum: 1, example: 42, description: 'The global index' })
  id!: number;

  @ApiProperty({ example: 'OrderPlaced' })
  messageType!: string;

  @ApiProperty({ type: String, nullable: true, example: 'customer-1' })
  userId!: string | null;

  @ApiProperty({
    ...JSON_CONTAINER_SCHEMA,
    example: { orderId: 'o-1001', total: 49.9 },
    description: 'The content as sent; object keys in PostgreSQL jsonb order (shorter first)',
  })
  body!: unknown;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { source: 'order-form' },
  })
  metadata!: Record<string, unknown> | null;

  @ApiProperty({
    example: '3f0a…',
    description: 'SHA-256 (hex) of the body in RFC 8785 canonical form (docs/ingestion.md)',
  })
  contentHash!: string;

  @ApiProperty({ format: 'date-time', example: '2026-12-01T08:00:00.000Z' })
  createdAt!: string;

  @ApiPropertyOptional({ example: 'order-1001', description: 'Aggregate stream appends only' })
  streamId?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    description: 'Aggregate stream appends only',
  })
  streamVersion?: number;

  @ApiPropertyOptional({
    example: 'acme',
    description:
      "The tenant it belongs to (docs/tenants.md); absent for a message of no tenant. `streamId` and `idempotencyKey` are then that tenant's names.",
  })
  tenant?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'Present when not 1' })
  schemaVersion?: number;

  @ApiPropertyOptional()
  idempotencyKey?: string;

  @ApiPropertyOptional({
    example: '4bf92f3577b34da6a3ce929d0e0e4736',
    description:
      'The correlation it belongs to (docs/observability.md); absent only on messages stored before correlation ids existed',
  })
  correlationId?: string;

  @ApiPropertyOptional({
    example: '41',
    description:
      'What caused it: the index (as text) of the message whose handler stored it, else the id of the request that started the correlation',
  })
  causationId?: string;

  @ApiPropertyOptional({
    example: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    description: 'The W3C trace context of the append that stored it, when it had one',
  })
  traceparent?: string;

  @ApiPropertyOptional({
    type: [String],
    example: ['/email'],
    description:
      'JSON pointers of personal fields shown as their replacement: the reader lacks the personal scope, or the subject was erased (docs/personal-data.md)',
  })
  redacted?: string[];
}
