import { ApiProperty } from '@nestjs/swagger';

/** A short-lived, single-use ticket for `GET /api/events/stream?ticket=`. */
export class StreamTicketResponseDto {
  @ApiProperty({ description: 'Opaque; pass as `?ticket=` to the stream, once' })
  ticket!: string;

  @ApiProperty({ format: 'date-time' })
  expiresAt!: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  expiresInMs!: number;
}
