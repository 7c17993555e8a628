import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ConfigError, DEV_TOKEN, loadConfig } from './config/ordinal-config.js';
import { DatabaseUnreachableError, prepareDatabase } from './database/prepare-database.js';
import { createApp, createLogger, listen } from './create-app.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config);
  const { created } = await prepareDatabase(config.databaseUrl, config.createDatabase);
  if (created) logger.log(`Created database for ${new URL(config.databaseUrl).pathname.slice(1)}`, 'Bootstrap');
  const app = await createApp(config, { logger });
  app.enableShutdownHooks();
  await listen(app, config.port, config.host);
  const log = new Logger('Bootstrap');
  log.log(`Ordinal ${config.env} server listening on http://localhost:${config.port} (ordering ${config.ordering})`);
  if (config.env === 'development') {
    log.log(`Development token: ${DEV_TOKEN}  (try: curl -H 'Authorization: Bearer ${DEV_TOKEN}' localhost:${config.port}/api/events/head)`);
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof DatabaseUnreachableError) {
    console.error(`Ordinal cannot start: ${error.message}`);
  } else {
    console.error('Ordinal failed to start:', error);
  }
  process.exit(1);
});
