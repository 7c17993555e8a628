import {
  Module,
  type DynamicModule,
  type INestApplicationContext,
  type Provider,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  DataSource,
  type EntityManager,
  type EntityTarget,
  type MigrationInterface,
  type ObjectLiteral,
  type Repository,
} from 'typeorm';
import { StreamStore, type EventClass } from '@ordinal/event-sourcing';
import { eventClassOf, requireEventMetadata, toEventData } from '@ordinal/event-sourcing/internal';
import {
  LogReader,
  LogWriter,
  type DeleteMode,
  type ExpectedVersion,
  type NewMessage,
} from '@ordinal/log';
import { OrdinalError } from '@ordinal/pg';
import { ProjectionsService } from '@ordinal/projections';
import { OrdinalModule } from '../ordinal.module.js';
import type { OrdinalModuleOptions } from '../ordinal-options.js';
import { startEmbeddedPostgres } from '../embedded/embedded-postgres.js';

/** Options of `ProjectionSpec.start`. */
export interface ProjectionSpecOptions {
  /**
   * The PostgreSQL server (any database on it): the spec creates a fresh database there and
   * drops it at `stop`. @default process.env.DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres
   */
  url?: string;
  /**
   * Runs on an embedded PostgreSQL (PGlite, in memory, in this process) instead of a server, so
   * the spec needs no PostgreSQL installed; needs the optional packages @electric-sql/pglite and
   * @electric-sql/pglite-socket. Gapless ordering only (the embedded database is one session).
   * @default true when ORDINAL_EMBEDDED=1 and no `url` is given
   */
  embedded?: boolean;
  /** The read model's entities. @default [] */
  entities?: Type[];
  /** The read model's migrations (they run with Ordinal's at start). @default [] */
  migrations?: (new () => MigrationInterface)[];
  /** What the projection injects besides Ordinal's services. @default [] */
  providers?: Provider[];
  /** Modules the projection's providers need. @default [] */
  imports?: (Type | DynamicModule)[];
  /** More OrdinalModule options (log ordering, subscriptions' batch size, …). */
  ordinal?: Pick<OrdinalModuleOptions, 'log' | 'eventSourcing' | 'subscriptions'>;
  /** Prefix of the database's name (letters, digits, `_`; a random suffix follows). @default 'ordinal_spec' */
  databasePrefix?: string;
  /**
   * Starts the projection at the first `run()` instead of at `start`, so it reads every given
   * as history, the way a projection deployed onto an existing log does (a deleted stream's
   * events reach it as tombstones only). Until then `app` has Ordinal without the projection.
   * @default false: the projection runs from `start` and reads the givens as they are appended
   */
  startAtRun?: boolean;
  /** Longest wait of `run()` for the projection to reach the head (ms). @default 10000 */
  timeoutMs?: number;
  /** Nest's logger: `false` (the default) keeps the test output quiet. */
  logger?: false | undefined;
}

/**
 * A projection on a database of its own: `start` creates the database and runs the
 * projection in a Nest application context, `given` appends events, `run` waits until the
 * projection has applied everything in the log, and the read model is there to assert on.
 * `stop` closes the application and drops the database (call it in `afterEach`/`finally`).
 *
 * ```ts
 * const spec = await ProjectionSpec.start(OrderSummaryProjection, { entities: [OrderSummary], migrations: [CreateOrderSummary1767225600000] });
 * try {
 *   await spec.given('order-1', new OrderPlaced('order-1', 'alice'));
 *   await spec.run();
 *   const row = await spec.repository(OrderSummary).findOneBy({ orderId: 'order-1' });
 * } finally {
 *   await spec.stop();
 * }
 * ```
 */
export class ProjectionSpec<P> {
  private stopped = false;

  private constructor(
    private context: INestApplicationContext,
    private readonly projectionClass: Type<P>,
    /** Starts the context that runs the projection (when `startAtRun` deferred it), else null. */
    private startProjection: (() => Promise<INestApplicationContext>) | null,
    private readonly drop: () => Promise<void>,
    private readonly timeoutMs: number,
  ) {}

  /** Creates a fresh database and starts `projection` on it (or, with `startAtRun`, Ordinal alone). */
  static async start<P>(
    projection: Type<P>,
    options: ProjectionSpecOptions = {},
  ): Promise<ProjectionSpec<P>> {
    const database =
      (options.embedded ?? (options.url === undefined && process.env.ORDINAL_EMBEDDED === '1'))
        ? await embeddedDatabase(options)
        : await freshDatabase(options);
    try {
      const timeoutMs = options.timeoutMs ?? 10_000;
      if (!options.startAtRun) {
        const app = await applicationContext(database, options, projection);
        return new ProjectionSpec(app, projection, null, database.drop, timeoutMs);
      }
      const writer = await applicationContext(database, options, null);
      const spec = new ProjectionSpec(
        writer,
        projection,
        async () => {
          await writer.close();
          return applicationContext(database, options, projection);
        },
        database.drop,
        timeoutMs,
      );
      return spec;
    } catch (error) {
      await database.drop().catch(() => undefined);
      throw error;
    }
  }

  /** The Nest application context: Ordinal and the projection (before a deferred start, Ordinal alone). */
  get app(): INestApplicationContext {
    return this.context;
  }

  /** Appends `events` (instances of `@DomainEvent` classes) to the stream `streamId`, after whatever it holds. */
  async given(streamId: string, ...events: object[]): Promise<this> {
    if (events.length === 0) return this;
    const encoded = events.map((event) => {
      const { eventType, schemaVersion } = requireEventMetadata(eventClassOf(event) as EventClass);
      return { eventType, schemaVersion, data: toEventData(event) };
    });
    await this.app.get(StreamStore).append(streamId, 'any', encoded);
    return this;
  }

  /**
   * Appends `events` to `streamId` only if it is at `expectedVersion` (a number, `'no_stream'`,
   * `'stream_exists'` or `'any'`); a mismatch rejects as the repository does
   * (`VersionConflictError`, `StreamDeletedError`, `StreamTombstonedError`).
   */
  async givenExpecting(
    streamId: string,
    expectedVersion: ExpectedVersion,
    ...events: object[]
  ): Promise<this> {
    const encoded = events.map((event) => {
      const { eventType, schemaVersion } = requireEventMetadata(eventClassOf(event) as EventClass);
      return { eventType, schemaVersion, data: toEventData(event) };
    });
    await this.app.get(StreamStore).append(streamId, expectedVersion, encoded);
    return this;
  }

  /**
   * Deletes `streamId` (docs/lifecycle.md): its events become tombstones (a `$tombstone`
   * handler gets them) and a `$stream-deleted` message is appended (a handler of that type
   * gets `{streamId, mode, lastVersion}`).
   */
  async givenDeleted(streamId: string, mode: DeleteMode = 'soft'): Promise<this> {
    await this.app.get(StreamStore).delete(streamId, { mode });
    return this;
  }

  /** Appends plain messages (no stream), as `PUT /api/events/message` would. */
  async givenMessages(...messages: NewMessage[]): Promise<this> {
    if (messages.length > 0)
      await this.app.get(LogWriter).append({ messages, skipDuplicateWindow: true });
    return this;
  }

  /** Waits until the projection has applied every message in the log (WaitTimeoutError after `timeoutMs`). */
  async run(): Promise<void> {
    if (this.startProjection) {
      const start = this.startProjection;
      this.startProjection = null;
      this.context = await start();
    }
    const head = await this.app.get(LogReader).safeHead();
    await this.app.get(ProjectionsService).waitFor(this.projectionClass, head, this.timeoutMs);
  }

  /** The projection instance that runs. */
  get projection(): P {
    return this.app.get(this.projectionClass);
  }

  /** The spec's DataSource, on its own database. */
  get dataSource(): DataSource {
    return this.app.get(DataSource);
  }

  get manager(): EntityManager {
    return this.dataSource.manager;
  }

  /** A TypeORM repository of a read-model entity. */
  repository<E extends ObjectLiteral>(entity: EntityTarget<E>): Repository<E> {
    return this.dataSource.getRepository(entity);
  }

  /** Closes the application and drops the database (or stops the embedded one). Safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    try {
      await this.context.close();
    } finally {
      await this.drop();
    }
  }
}

/** Ordinal (and `projection`, unless null) on the spec's database, in a Nest application context. */
async function applicationContext(
  database: { url: string; embedded: boolean },
  options: ProjectionSpecOptions,
  projection: Type | null,
): Promise<INestApplicationContext> {
  @Module({
    imports: [
      OrdinalModule.forRoot({
        url: database.url,
        entities: options.entities ?? [],
        migrations: options.migrations ?? [],
        // The embedded database is one session: one pooled connection (see startEmbeddedPostgres).
        typeorm: {
          extra: {
            max: database.embedded ? 1 : 4,
            application_name: 'ordinal-projection-spec',
          },
        },
        ...options.ordinal,
        log: { duplicateWindow: 0, ...options.ordinal?.log },
        subscriptions: {
          idlePollMs: 50,
          retryInitialMs: 50,
          retryMaxMs: 500,
          ...options.ordinal?.subscriptions,
        },
        cqrs: false,
      }),
      ...(options.imports ?? []),
    ],
    providers: [...(projection ? [projection] : []), ...(options.providers ?? [])],
  })
  class ProjectionSpecModule {}
  const app = await NestFactory.createApplicationContext(ProjectionSpecModule, {
    logger: options.logger ?? false,
  });
  await app.init();
  return app;
}

/** A fresh database on the PostgreSQL server of `options.url`, dropped by `drop`. */
async function freshDatabase(
  options: ProjectionSpecOptions,
): Promise<{ url: string; embedded: boolean; drop: () => Promise<void> }> {
  const server = new URL(
    options.url ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  );
  const maintenance = new URL(server);
  maintenance.pathname = '/postgres';
  const prefix = options.databasePrefix ?? 'ordinal_spec';
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(prefix))
    throw new OrdinalError(
      'invalid_configuration',
      `databasePrefix '${prefix}' must be 1-41 letters, digits or _ (not starting with a digit)`,
    );
  const name = `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 16)}`.toLowerCase();
  // An identifier cannot be a parameter; the name was checked against [A-Za-z0-9_] above.
  await onServer(maintenance.toString(), `CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    embedded: false,
    drop: () => onServer(maintenance.toString(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** An in-memory embedded PostgreSQL of the spec's own, stopped by `drop`. */
async function embeddedDatabase(
  options: ProjectionSpecOptions,
): Promise<{ url: string; embedded: boolean; drop: () => Promise<void> }> {
  if (options.ordinal?.log?.ordering === 'concurrent') {
    throw new OrdinalError(
      'invalid_configuration',
      "Concurrent ordering needs a PostgreSQL server (its watermark reads other sessions' locks; the embedded database is one session): pass url, or use gapless",
    );
  }
  const embedded = await startEmbeddedPostgres();
  return { url: embedded.url, embedded: true, drop: () => embedded.stop() };
}

async function onServer(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
