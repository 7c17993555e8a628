import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
} from 'class-validator';
import type { ErasureResult } from '@ordinal/log';

/** `PUT /api/personal-data/rules/:messageType`: which fields are personal data, and whose. */
export class PersonalDataRuleDto {
  @ApiProperty({
    example: '/customerId',
    description:
      'JSON pointer (RFC 6901) to the subject id in the body: a non-empty string or a number',
  })
  @IsString()
  @MaxLength(1000)
  subject!: string;

  @ApiProperty({
    type: [String],
    example: ['/email', '/address'],
    description: 'JSON pointers of the personal fields, sealed under the subject’s key',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(1000, { each: true })
  fields!: string[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { '/email': null },
    description: 'What a reader without the clear value gets at each field (default null)',
  })
  @IsOptional()
  @IsObject()
  replacement?: Record<string, unknown>;
}

/** A rule as stored, with its message type. */
export class PersonalDataRuleResponseDto extends PersonalDataRuleDto {
  @ApiProperty({ example: 'CustomerRegistered' })
  messageType!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { '/email': null } })
  declare replacement: Record<string, unknown>;
}

/** Every rule. */
export class PersonalDataRulesResponseDto {
  @ApiProperty({ type: [PersonalDataRuleResponseDto] })
  rules!: PersonalDataRuleResponseDto[];
}

/** `POST /api/subjects/:id/erase`. */
export class EraseSubjectDto {
  @ApiProperty({ example: 'GDPR art. 17 request #4711', description: 'Kept in the erasure ledger' })
  @IsString()
  @MaxLength(2000)
  reason!: string;
}

/** What an erasure answers (the ledger's entry). */
export class ErasureResponseDto implements ErasureResult {
  @ApiProperty({ description: 'SHA-256 (hex) of the subject id: what the ledger keeps' })
  subjectHash!: string;

  @ApiProperty({ format: 'date-time' })
  erasedAt!: string;

  @ApiProperty()
  reason!: string;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Index of the $subject-erased marker',
  })
  markerIndex!: number | null;

  @ApiProperty({
    description: 'True when the subject had been erased before: nothing was done again',
  })
  alreadyErased!: boolean;
}

/** What a reapply of the erasure ledger did. */
export class ReapplyResponseDto {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Subjects the ledger names; each key is destroyed again',
  })
  subjects!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Deleted tenants; every key of their subjects is destroyed again',
  })
  tenants!: number;
}
