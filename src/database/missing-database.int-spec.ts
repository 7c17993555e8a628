import { randomUUID } from 'node:crypto';
import { Module, type INestApplicationContext, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { DatabaseMissingError, OrdinalModule } from '@ordinal/nestjs';
import { serverUrl } from '@ordinal/test-support/test-database';

/** Every line the application logged, by level. */
class Captured implements LoggerService {
  readonly lines: { level: string; text: string }[] = [];
  log(message: unknown): void {
    this.lines.push({ level: 'log', text: String(message) });
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.lines.push({ level: 'error', text: [message, ...rest].map(String).join(' ') });
  }
  warn(message: unknown): void {
    this.lines.push({ level: 'warn', text: String(message) });
  }
}

async function onMaintenance<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(serverUrl());
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const exists = async (name: string) =>
  (await onMaintenance((c) => c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])))
    .rowCount === 1;

/**
 * Issue 23: a missing database made the framework retry `database "x" does not exist` with a
 * full stack every 3 s. Now it says what it is once, at once; in development (createDatabase,
 * on unless NODE_ENV=production) it creates the database, as the server does for its own.
 */
describe('OrdinalModule on a database that does not exist', () => {
  const name = `ordinal_missing_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const url = (() => {
    const u = new URL(serverUrl());
    u.pathname = `/${name}`;
    return u.toString();
  })();
  let app: INestApplicationContext | undefined;

  const start = async (options: { createDatabase?: boolean }, logger: LoggerService) => {
    @Module({
      imports: [
        OrdinalModule.forRoot({
          url,
          ...options,
          // TypeORM's own retry policy, as an application would leave it: retry every 3 s
          typeorm: { retryAttempts: 3, retryDelay: 3000 },
        }),
      ],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger, abortOnError: false });
    await app.init();
    return app;
  };

  afterAll(async () => {
    await app?.close();
    await onMaintenance((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });

  it('fails at once, with one error naming the database and what to do, without createDatabase', async () => {
    // Given a url naming a database that does not exist, and createDatabase off
    const logs = new Captured();
    // When the application starts
    const failure = await start({ createDatabase: false }, logs).catch((e: unknown) => e);
    // Then it fails with an error that says what it is
    expect(failure).toBeInstanceOf(DatabaseMissingError);
    expect((failure as DatabaseMissingError).message).toMatch(
      new RegExp(
        `^Database '${name}' does not exist on PostgreSQL at .* \\(SQLSTATE 3D000\\): create it`,
      ),
    );
    // And TypeORM did not retry it (no "Unable to connect … Retrying" line, no repeated stack)
    expect(logs.lines.filter((l) => /Retrying/.test(l.text))).toEqual([]);
    expect(await exists(name)).toBe(false);
  });

  it('creates it when createDatabase is on (the default outside production), and starts', async () => {
    const logs = new Captured();
    await start({ createDatabase: true }, logs);
    expect(await exists(name)).toBe(true);
    expect(logs.lines.filter((l) => /Retrying/.test(l.text))).toEqual([]);
    expect(logs.lines.map((l) => l.text)).toContainEqual(
      expect.stringMatching(new RegExp(`^Created database '${name}' on `)),
    );
  });
});
