import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsOptional } from 'class-validator';
import { NestedDtos } from '../../validation/nested-dto.decorator.js';
import { IsExpectedVersion } from './is-expected-version.validator.js';
import { StreamEventDto } from './stream-event.dto.js';

/** `POST /api/streams/:streamId/events`: events appended atomically if the stream is at `expectedVersion`. */
export class AppendEventsDto {
  @ApiProperty({
    required: false,
    oneOf: [
      { type: 'integer', minimum: 0 },
      { type: 'string', enum: ['any', 'no_stream', 'stream_exists'] },
    ],
    example: 0,
    description:
      'The version the stream must be at: 0 = must not exist (same as "no_stream"), "stream_exists" = must have events, "any" skips the check. Required unless an `If-Match` or `If-None-Match` header says it',
  })
  @IsOptional()
  @IsExpectedVersion()
  expectedVersion?: number | 'any' | 'no_stream' | 'stream_exists';

  @ApiProperty({ type: [StreamEventDto], minItems: 1, maxItems: 1000 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @NestedDtos(() => StreamEventDto)
  events!: StreamEventDto[];
}
