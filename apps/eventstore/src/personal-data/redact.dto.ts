import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import type { RedactResult } from '@ordinal/log';

/** `POST /api/admin/redact`: which type's legacy rows to seal, and in what batches. */
export class RedactRequestDto {
  @ApiPropertyOptional({
    example: 'CustomerRegistered',
    description: 'Only this message type (it must have a rule); default every type with a rule',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  messageType?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 100000,
    default: 1000,
    description: 'Indices a batch covers (one short transaction each)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100_000)
  batchSize?: number;
}

/** A row the redaction could not seal, and why. */
export class UnredactableRowDto {
  @ApiProperty({ type: 'integer' })
  index!: number;

  @ApiProperty({
    example: "Message 'CustomerRegistered': its personal-data subject /customerId is missing",
  })
  reason!: string;
}

/** The scan after a redaction. */
export class RedactVerificationDto {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Rows up to `through` of the types still holding a personal value in clear',
  })
  clearRows!: number;

  @ApiProperty({ type: [Number], description: 'The first 100 of them' })
  clearIndices!: number[];

  @ApiProperty({ description: '`clearRows` is 0' })
  verified!: boolean;
}

/** What a redaction did, then what its verification scan found. */
export class RedactResponseDto implements RedactResult {
  @ApiProperty({ type: [String], example: ['CustomerRegistered'] })
  messageTypes!: string[];

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Every index up to this one (the head at the start) was walked',
  })
  through!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  batches!: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Rows of the types read' })
  scanned!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Rows rewritten in place: personal fields sealed, replacements in the body',
  })
  rewritten!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Of `rewritten`, rows of an erased subject (replaced; no key made)',
  })
  rewrittenErased!: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Rows sealed already: untouched' })
  alreadySealed!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Rows holding none of the rule’s fields: untouched',
  })
  withoutPersonalFields!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Rows that cannot be sealed (their subject is missing): untouched, in clear',
  })
  unredactable!: number;

  @ApiProperty({ type: [UnredactableRowDto], description: 'The first 100 of them, with why' })
  unredactableRows!: UnredactableRowDto[];

  @ApiProperty({ type: RedactVerificationDto })
  verification!: RedactVerificationDto;
}
