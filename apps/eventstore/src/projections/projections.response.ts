import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** A live process that registered a consumer (its owner, or one standing by). */
export class ConsumerProcessDto {
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
}

/** The process that holds a consumer's lease. */
export class ConsumerOwnerDto extends ConsumerProcessDto {
  @ApiProperty({
    description:
      'Its heartbeat is overdue (more than half its lease has passed since the last renewal): it may be dead. The state is then `stale`',
  })
  stale!: boolean;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Milliseconds until its lease runs out unless renewed',
  })
  leaseExpiresInMs!: number | null;
}

const STATES = [
  'starting',
  'running',
  'failed',
  'stopped',
  'rebuilding',
  'standby',
  'unowned',
  'stale',
];

/** One partition of a partitioned projection. */
export class PartitionReportDto {
  @ApiProperty({ description: '`<projection>#<n>`' })
  name!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  position!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  lag!: number;

  @ApiProperty({ enum: STATES })
  state!: string;

  @ApiProperty({ type: String, nullable: true })
  lastError!: string | null;

  @ApiProperty({ type: 'integer', minimum: 0 })
  parked!: number;

  @ApiProperty({
    type: ConsumerOwnerDto,
    nullable: true,
    description: 'The live process running it (null: none)',
  })
  owner!: ConsumerOwnerDto | null;

  @ApiProperty({ type: [ConsumerProcessDto] })
  standbys!: ConsumerProcessDto[];
}

/** One build of a projection version (docs/projections.md, "Versions and blue/green deploys"). */
export class ProjectionVersionDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  version!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description: '1, then one more per blue/green rebuild',
  })
  build!: number;

  @ApiProperty({ enum: ['candidate', 'serving', 'previous', 'retired'] })
  state!: string;

  @ApiProperty({
    description:
      'Its consumer (group) name: `<name>` for v1 build 1, else `<name>@v<version>[.<build>]`',
  })
  consumers!: string;

  @ApiProperty({ description: 'The schema of its read-model tables' })
  schema!: string;

  @ApiProperty({ type: [String] })
  tables!: string[];

  @ApiProperty({ type: 'integer', minimum: 0 })
  position!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      "Behind the head; a candidate's behind the serving version while a process runs that; a previous one's behind its stop",
  })
  lag!: number;

  @ApiProperty({ description: 'A live process runs it' })
  running!: boolean;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'It applies nothing above this index',
  })
  stopAt!: number | null;

  @ApiProperty({
    description:
      'A previous build a late row may still reach at or below its stop (concurrent ordering): it runs on until no position there is watched (ORDINAL_LATE_WATCH_MS)',
  })
  awaitingLate!: boolean;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Its handlers run live above this index',
  })
  liveFrom!: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Promoted by itself this close; null: by hand',
  })
  promoteAtLag!: number | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  promotedAt!: string | null;
}

/** One projection or subscription (the fields it always has; more may follow). */
export class SubscriptionReportDto {
  @ApiProperty()
  name!: string;

  @ApiProperty({ enum: ['projection', 'subscription'] })
  kind!: string;

  @ApiProperty()
  stream!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  position!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  head!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  lag!: number;

  @ApiProperty({
    enum: STATES,
    description:
      "The owner's state; `unowned`: no live process holds it; `stale`: the owner's heartbeat is overdue (it may be dead)",
  })
  state!: string;

  @ApiProperty({ type: String, nullable: true })
  lastError!: string | null;

  @ApiProperty({ type: 'integer', minimum: 0 })
  parked!: number;

  @ApiProperty({
    type: ConsumerOwnerDto,
    nullable: true,
    description: 'The live process running it (null: none, or a partitioned projection)',
  })
  owner!: ConsumerOwnerDto | null;

  @ApiProperty({
    type: [ConsumerProcessDto],
    description: 'The other live processes that registered it: they take over when the owner goes',
  })
  standbys!: ConsumerProcessDto[];

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description:
      'Failed attempts since the last success; only in the answer of the process that runs it (the others do not know)',
  })
  retries?: number;

  @ApiPropertyOptional({ type: [PartitionReportDto] })
  partitions?: PartitionReportDto[];

  @ApiPropertyOptional({ description: 'With atLeast: whether it was reached in time' })
  reached?: boolean;

  @ApiPropertyOptional({
    description: 'A build of a versioned projection: the projection it belongs to',
  })
  projection?: string;

  @ApiPropertyOptional({
    type: 'integer',
    description: 'A build of a versioned projection: its version',
  })
  version?: number;

  @ApiPropertyOptional({
    type: 'integer',
    description: 'A build of a versioned projection: its build',
  })
  build?: number;

  @ApiPropertyOptional({
    enum: ['candidate', 'serving', 'previous', 'retired'],
    description: 'A build of a versioned projection: its state',
  })
  versionState?: string;

  @ApiPropertyOptional({
    type: 'integer',
    description:
      'GET of one projection: the version that serves reads (its tables are behind the views)',
  })
  servingVersion?: number;

  @ApiPropertyOptional({ type: 'integer', description: 'GET of one projection: the serving build' })
  servingBuild?: number;

  @ApiPropertyOptional({
    type: 'integer',
    description: 'GET of one projection: every event up to here is in what readers get',
  })
  servingPosition?: number;

  @ApiPropertyOptional({
    type: [ProjectionVersionDto],
    description: 'GET of one projection: every build of its versions',
  })
  versions?: ProjectionVersionDto[];
}

/** `POST /api/projections/:name/versions/:v/retire`. */
export class RetiredVersionDto {
  @ApiProperty()
  name!: string;

  @ApiProperty({ type: 'integer' })
  version!: number;

  @ApiProperty({
    type: [String],
    description: 'The schemas dropped (exactly those of the retired builds)',
  })
  dropped!: string[];
}

/** The low watermark's figures. */
export class WatermarkStatusDto {
  @ApiProperty({ enum: ['gapless', 'concurrent'] })
  ordering!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  position!: number;

  @ApiProperty({ type: 'integer' })
  gapTimeoutMs!: number;

  @ApiProperty()
  exactRelease!: boolean;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  heldHole!: Record<string, unknown> | null;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } })
  counters!: Record<string, number>;
}

/** `GET /api/projections`. */
export class ProjectionsResponseDto {
  @ApiPropertyOptional({ description: 'With atLeast: whether every one reached it in time' })
  reached?: boolean;

  @ApiProperty({ type: [SubscriptionReportDto] })
  projections!: SubscriptionReportDto[];

  @ApiProperty({ type: WatermarkStatusDto })
  watermark!: WatermarkStatusDto;
}

/** A message a projection's `park` error policy set aside. */
export class ParkedMessageDto {
  @ApiProperty({ description: 'The consumer (projection, or one partition of it, `<name>#<n>`)' })
  consumer!: string;

  @ApiProperty({ type: 'integer', description: "The message's index" })
  position!: number;

  @ApiProperty()
  messageType!: string;

  @ApiProperty({ description: "The handler's last error" })
  error!: string;

  @ApiProperty({ type: 'integer' })
  attempts!: number;

  @ApiProperty({ format: 'date-time' })
  parkedAt!: string;
}

/** `GET /api/projections/:name/parked`. */
export class ParkedListDto {
  @ApiProperty()
  name!: string;

  @ApiProperty({ type: [ParkedMessageDto] })
  parked!: ParkedMessageDto[];
}

/** `POST /api/projections/:name/parked/replay`. */
export class ParkedReplayDto {
  @ApiProperty()
  name!: string;

  @ApiProperty({ type: 'integer', description: 'Applied again, and gone from the parked list' })
  replayed!: number;

  @ApiProperty({ type: 'integer', description: 'Still parked (the first of them failed again)' })
  remaining!: number;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The error of the first message that failed again',
  })
  error!: string | null;
}
