import {
  Injectable,
  Module,
  Scope,
  type INestApplicationContext,
  type LoggerService,
} from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import {
  Aggregate,
  AggregateRepository,
  AggregateRoot,
  ConsumersHealthIndicator,
  DomainEvent,
  EventHandler,
  InjectAggregateRepository,
  aggregateRepositoryToken,
  ORDINAL_OPTIONS,
  OrdinalError,
  OrdinalModule,
  Projection,
  SubscriptionsService,
  type ResolvedOrdinalOptions,
} from '@ordinal/nestjs';
import { ConsumerOwnership } from '@ordinal/ownership';
import {
  SUBSCRIPTIONS_OPTIONS,
  type ResolvedSubscriptionsOptions,
} from '@ordinal/subscriptions/internal';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';

@DomainEvent('LampSwitched')
class LampSwitched {
  constructor(readonly on: boolean) {}
}

@Aggregate({ events: [LampSwitched] })
class Lamp extends AggregateRoot {
  on = false;
  toggle(): void {
    this.apply(new LampSwitched(!this.on));
  }
  onLampSwitched(event: LampSwitched): void {
    this.on = event.on;
  }
}

@Injectable()
class Lamps {
  constructor(@InjectAggregateRepository(Lamp) readonly repository: AggregateRepository<Lamp>) {}
}

class CreateLampLog1767225600100 implements MigrationInterface {
  async up(runner: QueryRunner): Promise<void> {
    await runner.query('CREATE TABLE lamp_log (index bigint PRIMARY KEY)');
  }
  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE lamp_log');
  }
}

class CreateLampStats1767225600101 implements MigrationInterface {
  async up(runner: QueryRunner): Promise<void> {
    await runner.query('CREATE TABLE lamp_stats (id int PRIMARY KEY)');
  }
  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE lamp_stats');
  }
}

@Projection('lamp-log')
@Injectable({ scope: Scope.TRANSIENT })
class TransientProjection {
  @EventHandler(LampSwitched)
  onSwitched(): void {}
}

class Captured implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
}

describe('OrdinalModule', () => {
  let db: TestDatabase;
  let app: INestApplicationContext | undefined;
  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await db.drop();
  });

  const start = async (
    imports: unknown[],
    providers: unknown[] = [Lamps],
    logger: LoggerService | false = false,
  ) => {
    @Module({ imports: imports as never[], providers: providers as never[] })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger, abortOnError: false });
    await app.init();
    return app;
  };

  it('forRootAsync: options from ConfigService, resolved once; user migrations with Ordinal’s; repositories from forFeature', async () => {
    // Given options that come from ConfigService
    await start([
      ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ DATABASE_URL: db.url })] }),
      OrdinalModule.forRootAsync({
        imports: [ConfigModule],
        inject: [ConfigService],
        useFactory: (config: ConfigService) => ({
          url: config.getOrThrow<string>('DATABASE_URL'),
          migrations: [CreateLampLog1767225600100],
          log: { duplicateWindow: 0 },
        }),
      }),
      OrdinalModule.forFeature([Lamp]),
    ]);
    // Then one provider holds the resolved options, and each library's section is in it
    const options = app!.get<ResolvedOrdinalOptions>(ORDINAL_OPTIONS);
    expect(options.log).toMatchObject({ startMarker: false, migrate: true, duplicateWindow: 0 });
    expect(options.eventSourcing.migrate).toBe(false);
    // And the user's migration ran in the same run as Ordinal's
    const names = (
      await db.query<{ name: string }>('SELECT name FROM ordinal_migrations ORDER BY id')
    ).map((r) => r.name);
    expect(names).toContain('CreateLampLog1767225600100');
    expect(names.indexOf('CreateLampLog1767225600100')).toBe(names.length - 1);
    // And a repository saves and loads; no StartMarker was written
    const lamps = app!.get(Lamps).repository;
    const lamp = lamps.create('lamp-1');
    lamp.toggle();
    await lamps.save(lamp);
    expect((await lamps.load('lamp-1')).on).toBe(true);
    // And a script or test outside any provider gets the same repository by its token
    expect(app!.get<AggregateRepository<Lamp>>(aggregateRepositoryToken(Lamp))).toBe(lamps);
    expect(
      await db.query('SELECT index FROM messages WHERE message_type = $1', ['StartMarker']),
    ).toEqual([]);
  });

  it('forRootAsync: consumer ownership’s takeoverMs and the health’s stuckAfterMs reach the services; the ownership tables come with the one migration run', async () => {
    // Given ownership settings that come from ConfigService
    await start(
      [
        ConfigModule.forRoot({
          ignoreEnvFile: true,
          load: [() => ({ DATABASE_URL: db.url, TAKEOVER_MS: '2500', STUCK_AFTER_MS: '1234' })],
        }),
        OrdinalModule.forRootAsync({
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: (config: ConfigService) => ({
            url: config.getOrThrow<string>('DATABASE_URL'),
            log: { takeoverMs: Number(config.getOrThrow<string>('TAKEOVER_MS')) },
            subscriptions: { stuckAfterMs: Number(config.getOrThrow<string>('STUCK_AFTER_MS')) },
          }),
        }),
      ],
      [],
    );
    // Then the lease timings derive from the given bound, and the health indicator reads the resolved subscriptions options
    expect(app!.get(ConsumerOwnership).timings).toEqual({
      takeoverMs: 2500,
      ttlMs: 1500,
      tickMs: 500,
      forgetAfterMs: 25000,
    });
    expect(app!.get<ResolvedSubscriptionsOptions>(SUBSCRIPTIONS_OPTIONS).stuckAfterMs).toBe(1234);
    expect(await app!.get(ConsumersHealthIndicator).isHealthy('projections')).toEqual({
      projections: { status: 'up', stuck: [] },
    });
    // And the ownership tables were created in the one migration run, each migration once
    const rows = await db.query<{ name: string; n: number }>(
      'SELECT name, count(*)::int AS n FROM ordinal_migrations GROUP BY name',
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { name: 'CreateConsumerLeases1765300000000', n: 1 },
        { name: 'ConsumerDirectory1765200000002', n: 1 },
      ]),
    );
    const [tables] = await db.query<{ leases: boolean; processes: boolean }>(
      "SELECT to_regclass('consumer_leases') IS NOT NULL AS leases, to_regclass('consumer_processes') IS NOT NULL AS processes",
    );
    expect(tables).toEqual({ leases: true, processes: true });
  });

  it('runs the migrations a feature contributes with forRoot’s, each once', async () => {
    await start([
      OrdinalModule.forRoot({ url: db.url, migrations: [CreateLampLog1767225600100] }),
      OrdinalModule.forFeature([Lamp], {
        migrations: [CreateLampStats1767225600101, CreateLampLog1767225600100],
      }),
    ]);
    const rows = await db.query<{ name: string; n: number }>(
      'SELECT name, count(*)::int AS n FROM ordinal_migrations GROUP BY name',
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { name: 'CreateLampLog1767225600100', n: 1 },
        { name: 'CreateLampStats1767225600101', n: 1 },
      ]),
    );
    const [table] = await db.query<{ exists: boolean }>(
      "SELECT to_regclass('lamp_stats') IS NOT NULL AS exists",
    );
    expect(table.exists).toBe(true);
  });

  it("uses the application's own TypeOrmModule connection with useExistingDataSource, and writes a StartMarker when asked", async () => {
    await start([
      TypeOrmModule.forRoot({
        type: 'postgres',
        url: db.url,
        entities: [],
        synchronize: false,
        extra: { application_name: 'the-apps-own' },
      }),
      OrdinalModule.forRoot({ useExistingDataSource: true, startMarker: true }),
      OrdinalModule.forFeature([Lamp]),
    ]);
    const dataSource = app!.get(DataSource);
    expect((dataSource.options.extra as { application_name: string }).application_name).toBe(
      'the-apps-own',
    );
    // An application without HTTP gets its marker at bootstrap
    expect(
      await db.query('SELECT index FROM messages WHERE message_type = $1', ['StartMarker']),
    ).toHaveLength(1);
  });

  it('skips a request- or transient-scoped projection with a warning, as @nestjs/schedule does', async () => {
    const logs = new Captured();
    await start([OrdinalModule.forRoot({ url: db.url })], [TransientProjection], logs);
    expect(app!.get(SubscriptionsService).names()).not.toContain('lamp-log');
    expect(
      logs.warnings.some((w) =>
        /Projection 'lamp-log' \(TransientProjection\) is not registered: it is request- or transient-scoped/.test(
          w,
        ),
      ),
    ).toBe(true);
  });

  it('says what is missing when it has no way to reach PostgreSQL', async () => {
    const attempt = start([OrdinalModule.forRoot({})], []);
    await expect(attempt).rejects.toBeInstanceOf(OrdinalError);
    await expect(attempt).rejects.toThrow(/needs a PostgreSQL url/);
  });
});
