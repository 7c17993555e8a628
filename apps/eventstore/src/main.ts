import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { EmbeddedPostgresError } from '@ordinal/nestjs';
import { ConfigError, DEV_TOKEN, loadConfig } from './config/ordinal-config.js';
import { DatabaseUnreachableError, prepareDatabase } from './database/prepare-database.js';
import { resolveDevelopmentServices } from './database/embedded-default.js';
import { createApp, createLogger, listen } from './create-app.js';

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

main().catch((error: unknown) => {
  if (
    error instanceof ConfigError ||
    error instanceof DatabaseUnreachableError ||
    error instanceof EmbeddedPostgresError
  ) {
    console.error(`Ordinal cannot start: ${error.message}`);
  } else {
    console.error('Ordinal failed to start:', error);
  }
  process.exit(1);
});
