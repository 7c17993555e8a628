import { ApiProperty } from '@nestjs/swagger';

/** One push interface's state (the fields `GET /api/interfaces` always has; more may follow). */
export class InterfaceReportDto {
  @ApiProperty()
  name!: string;

  @ApiProperty({ enum: ['replayable', 'realtime'] })
  type!: string;

  @ApiProperty()
  state!: string;

  @ApiProperty({ type: 'integer', nullable: true })
  bookmark!: number | null;

  @ApiProperty({ type: 'integer' })
  position!: number;
}

/** `GET /api/interfaces`. */
export class InterfacesResponseDto {
  @ApiProperty({ description: 'Whether AMQP is on' })
  amqp!: boolean;

  @ApiProperty({ type: String, nullable: true, description: 'The broker connection state, null with AMQP off' })
  broker!: string | null;

  @ApiProperty({ type: [InterfaceReportDto] })
  interfaces!: InterfaceReportDto[];
}
