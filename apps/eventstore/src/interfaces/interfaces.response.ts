import { ApiProperty } from '@nestjs/swagger';

/** The process publishing an interface. */
export class InterfaceOwnerDto {
  @ApiProperty({ description: '`host:pid:random`, as in consumer_leases.owner' })
  id!: string;

  @ApiProperty({ type: 'integer', nullable: true })
  pid!: number | null;

  @ApiProperty({ type: String, nullable: true })
  host!: string | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Milliseconds since its last heartbeat',
  })
  heartbeatAgeMs!: number | null;

  @ApiProperty({ description: 'Whether it is the process that answered' })
  self!: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The state where it runs (as of that heartbeat)',
  })
  state!: string | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The position where it runs (as of that heartbeat)',
  })
  position!: number | null;
}

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

  @ApiProperty({
    type: InterfaceOwnerDto,
    nullable: true,
    description: 'The live process publishing it (null: none right now)',
  })
  owner!: InterfaceOwnerDto | null;

  @ApiProperty({
    description:
      'Whether the answering process has it configured (the others are known from the database)',
  })
  local!: boolean;
}

/** `GET /api/interfaces`: every interface any server registered on the database. */
export class InterfacesResponseDto {
  @ApiProperty({ description: 'Whether AMQP is on' })
  amqp!: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The broker connection state, null with AMQP off',
  })
  broker!: string | null;

  @ApiProperty({ type: [InterfaceReportDto] })
  interfaces!: InterfaceReportDto[];
}
