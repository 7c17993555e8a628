import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { ConsoleLogger, Logger } from '@nestjs/common';
import { maskCredentials } from '@ordinal/pg';
import { EmbeddedPostgresError } from '@ordinal/nestjs';
import { MigrationFailedError } from '@ordinal/pg';
import { ConfigError, DEV_TOKEN, loadConfig } from './config/ordinal-config.js';
import { DatabaseUnreachableError, prepareDatabase } from './database/prepare-database.js';
import { resolveDevelopmentServices } from './database/embedded-default.js';
import { createApp, createLogger, listen } from './create-app.js';
import { migrateOnly } from './database/migrate-only.js';

async function main(): Promise<void> {
  const services = await resolveDevelopmentServices(loadConfig(), process.env);
  const { config, embedded } = services;
  const logger = createLogger(config);
  for (const note of services.notes) logger.log(note, 'Bootstrap');
  const { created } = await prepareDatabase(config.databaseUrl, config.createDatabase, config.role);
  if (created)
    logger.log(
      `Created database for ${new URL(config.databaseUrl).pathname.slice(1)}`,
      'Bootstrap',
    );
  if (config.migrations === 'only') {
    // ORDINAL_MIGRATIONS=only: a migration job (before a rolling deploy, a Kubernetes Job): run them, then exit 0.
    try {
      const applied = await migrateOnly(config.databaseUrl);
      logger.log(
        applied.length === 0
          ? 'ORDINAL_MIGRATIONS=only: nothing to migrate, the schema is up to date; exiting'
          : `ORDINAL_MIGRATIONS=only: applied ${applied.length} migration(s): ${applied.join(', ')}; exiting`,
        'Bootstrap',
      );
    } finally {
      await embedded?.stop();
    }
    return;
  }
  const app = await createApp(config, { logger });
  if (embedded) {
    // The embedded database closes after the server (PGlite writes its data out on close).
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        void app
          .close()
          .finally(() => embedded.stop())
          .finally(() => process.exit(0));
      });
    }
  } else {
    app.enableShutdownHooks();
  }
  await listen(app, config.port, config.host);
  // The port bound, which PORT=0 leaves to the system: whoever started the process reads it here.
  const { port } = app.getHttpServer().address() as AddressInfo;
  const log = new Logger('Bootstrap');
  const development = config.env === 'development';
  // In development the printed link opens the console signed in: the token rides in the
  // fragment, which the browser keeps to itself (the page never embeds a token).
  const consoleUrl = `http://localhost:${port}/console${development ? `#token=${DEV_TOKEN}` : ''}`;
  log.log(
    `Ordinal ${config.env} server listening on http://localhost:${port} (ordering ${config.ordering}${config.role === 'replica-reader' ? ', replica reader: reads only' : ''}); console: ${consoleUrl}`,
  );
  if (development) {
    log.log(
      `Development token: ${DEV_TOKEN}  (try: curl -H 'Authorization: Bearer ${DEV_TOKEN}' localhost:${port}/api/events/head)`,
    );
  }
}

/**
 * A start that fails says why once, on one line of the configured format (JSON in production,
 * so a log collector reads it), with every URL's password masked, and exits 1: no retry loop
 * of stack traces (a supervisor that restarts it gets the same one line each time).
 */
main().catch((error: unknown) => {
  const env = process.env;
  const json =
    env.ORDINAL_LOG_FORMAT === 'json' ||
    (env.ORDINAL_LOG_FORMAT !== 'text' && env.ORDINAL_ENV === 'production');
  const logger = new ConsoleLogger({ json, colors: !json && process.stderr.isTTY === true });
  const known =
    error instanceof ConfigError ||
    error instanceof DatabaseUnreachableError ||
    error instanceof EmbeddedPostgresError ||
    error instanceof MigrationFailedError;
  const text = known
    ? `Ordinal cannot start: ${error.message}`
    : `Ordinal failed to start: ${(error as Error)?.stack ?? String(error)}`;
  logger.error(maskCredentials(text), 'Bootstrap');
  process.exit(1);
});
