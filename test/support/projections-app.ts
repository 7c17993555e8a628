import { Module, type INestApplicationContext, type Provider, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OrdinalModule, type OrdinalModuleOptions } from '@ordinal/nestjs';
import pg from 'pg';

/** What a suite's projections app is built from. */
export interface ProjectionsAppOptions {
  log?: OrdinalModuleOptions['log'];
  subscriptions?: OrdinalModuleOptions['subscriptions'];
  providers?: Provider[];
  eventSourcing?: OrdinalModuleOptions['eventSourcing'];
  /** TypeORM entities of the read models. */
  entities?: Type[];
}

/**
 * A user's Nest application with Ordinal and projections (OrdinalModule.forRoot) on the
 * suite's database, started as an application context.
 */
export async function startProjectionsApp(
  databaseUrl: string,
  options: ProjectionsAppOptions = {},
): Promise<INestApplicationContext> {
  @Module({
    imports: [
      OrdinalModule.forRoot({
        url: databaseUrl,
        entities: options.entities ?? [],
        typeorm: { extra: { max: 10, application_name: 'projections-app' } },
        log: { duplicateWindow: 0, ...options.log },
        eventSourcing: options.eventSourcing,
        subscriptions: { retryInitialMs: 50, retryMaxMs: 500, ...options.subscriptions },
        cqrs: false,
      }),
    ],
    providers: options.providers ?? [],
  })
  class ProjectionsSuiteModule {}
  // (createApplicationContext runs init itself)
  return NestFactory.createApplicationContext(ProjectionsSuiteModule, {
    logger: process.env.ORDINAL_TEST_LOGS ? undefined : false,
  });
}

/**
 * A writer like Ordinal's concurrent flush, on a raw connection so a test can hold its
 * transaction open: xid first, then the category lock, then positions drawn inside the INSERT.
 */
export class RawWriter {
  private constructor(private readonly client: pg.Client) {}

  static async open(url: string, applicationName = 'raw-writer'): Promise<RawWriter> {
    const client = new pg.Client({ connectionString: url, application_name: applicationName });
    await client.connect();
    return new RawWriter(client);
  }

  async begin(): Promise<void> {
    await this.client.query('BEGIN');
    await this.client.query('SELECT pg_current_xact_id()');
  }

  /** Inserts `count` messages of `type` into stream `<category>-1`; returns their positions. */
  async insert(category: string, count = 1, type = 'T'): Promise<number[]> {
    await this.client.query(`SELECT pg_advisory_xact_lock(hashtext('raw:' || $1))`, [category]);
    const { rows } = await this.client.query<{ index: number }>(
      `INSERT INTO messages (index, message_type, category, stream_id, body, content_hash)
       SELECT nextval('messages_index_seq'), $3, $1, $1 || '-1', jsonb_build_object('n', g), 'h' FROM generate_series(1, $2) g RETURNING index::int AS index`,
      [category, count, type],
    );
    return rows.map((r) => r.index).sort((a, b) => a - b);
  }

  commit = async (): Promise<void> => void (await this.client.query('COMMIT'));
  rollback = async (): Promise<void> => void (await this.client.query('ROLLBACK'));

  /** Rolls back whatever is open and closes the connection (for finally blocks). */
  async end(): Promise<void> {
    await this.client.query('ROLLBACK').catch(() => undefined);
    await this.client.end().catch(() => undefined);
  }
}
