import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { TOKEN_REFUSAL_REASONS, type TokenRefusalReason } from '../auth/token-refused.exception.js';

/** One field a 400 names, and what is wrong with it. */
export class FieldProblemDto {
  @ApiProperty({ example: 'messages.1.messageType' })
  field!: string;

  @ApiProperty({
    type: [String],
    example: ['messageType must be 1-200 characters of [A-Za-z0-9._:-]'],
  })
  problems!: string[];
}

/** The message of a 403 `access_denied`. */
export class DeniedMessageDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Its position in the batch' })
  index?: number;

  @ApiPropertyOptional({ example: 'EmployeeHired' })
  messageType?: string;

  @ApiPropertyOptional({ type: 'string', nullable: true, example: 'employee-17' })
  streamId?: string | null;
}

/**
 * The one body of every error answer (4xx and 5xx): `{statusCode, error, message}`, plus a
 * stable `code` where the error has one and details of that error (`fields`, `current`, …).
 */
export class ErrorResponseDto {
  @ApiProperty({ type: 'integer', example: 400 })
  statusCode!: number;

  @ApiProperty({ example: 'Bad Request', description: 'The status text' })
  error!: string;

  @ApiProperty({
    example:
      'content.items.3 has a NUL character (\\u0000) or an unpaired surrogate, which PostgreSQL cannot store',
    description: 'What is wrong, and what to do',
  })
  message!: string;

  @ApiPropertyOptional({
    example: 'invalid_message',
    description:
      'Stable machine-readable code (invalid_message, unknown_field, invalid_parameter, repeated_parameter, idempotency_key_reused, version_conflict, database_unavailable, …)',
  })
  code?: string;

  @ApiPropertyOptional({
    example: 'startIndex',
    description:
      "400 `invalid_parameter`, `repeated_parameter` and `invalid_stream_id` of a path or query parameter (and `invalid_tenant`: `Ordinal-Tenant` or the path's `tenant`): the name of the parameter refused",
  })
  parameter?: string;

  @ApiPropertyOptional({
    example: 'globex',
    description:
      '403 `tenant_forbidden`: the tenant the request asked to act for, which the principal may not (docs/tenants.md)',
  })
  tenant?: string;

  @ApiPropertyOptional({
    enum: TOKEN_REFUSAL_REASONS,
    example: 'expired',
    description:
      '401 `invalid_token`: which check refused the bearer token (docs/security.md lists each)',
  })
  reason?: TokenRefusalReason;

  @ApiPropertyOptional({
    type: DeniedMessageDto,
    description: '403 `access_denied`: the message an access rule refused (in a batch, its index)',
  })
  denied?: DeniedMessageDto;

  @ApiPropertyOptional({
    type: [FieldProblemDto],
    description: 'Validation errors: every bad field by its path',
  })
  fields?: FieldProblemDto[];

  @ApiPropertyOptional({
    description:
      '503: the connection dropped while committing; the message may be stored (retry with an idempotency key)',
  })
  outcomeUnknown?: boolean;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    example: 17,
    description:
      'Bulk import: the 1-based line of the input that was refused (nothing of the import was stored)',
  })
  line?: number;
}
