import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { spawnScript, type ServerProcess } from '../support/server-process.js';
import { brokerUrl, connectTestBroker, uniqueName } from '../support/amqp-broker.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built user's service (`npm test` runs `tsc -b` first). */
const EXIT_SERVICE = join(root, 'test', 'bench', 'dist', 'support', 'exit-service.js');
/** How long the process may take to exit after `app.close()` resolved. */
const EXIT_DEADLINE_MS = 10_000;

/** Resolves with the exit code once the child exited; rejects (and kills it) if it is still alive `ms` after `closed`. */
async function exitAfterClose(service: ServerProcess, ms: number): Promise<number | string | null> {
  await Promise.race([
    service.waitForOutput(/^closed$/m, 90_000),
    service.exited.then((code) =>
      Promise.reject(
        new Error(
          `the service exited with ${code} before app.close() resolved:\n${service.output()}`,
        ),
      ),
    ),
  ]);
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `the service was still running ${ms} ms after app.close() resolved:\n${service.output()}`,
          ),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([service.exited, stuck]);
  } finally {
    clearTimeout(timer);
    await service.stop('SIGKILL');
  }
}

/**
 * A user's service with OrdinalModule (and AmqpModule) exits by itself after `app.close()`:
 * no timer, socket, pool, LISTEN connection, lease heartbeat or channel of the libraries keeps
 * its event loop alive. The service (test/bench/support/exit-service.ts) never calls
 * `process.exit`.
 */
describe('a service exits by itself after app.close()', () => {
  let db: TestDatabase;

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await db?.drop();
  });

  it('with the log, aggregates, a projection and a subscription', async () => {
    // Given a service that saved an aggregate, appended, and saw its projection and subscription apply it all
    const service = spawnScript(EXIT_SERVICE, { DATABASE_URL: db.url });

    // When it has closed its application and does nothing more
    const code = await exitAfterClose(service, EXIT_DEADLINE_MS);

    // Then the process ends by itself, cleanly
    expect({ code, output: service.output() }).toEqual({ code: 0, output: 'closed\n' });
  });

  it('with AMQP input and a push interface too', async () => {
    // Given the same service with AmqpModule: a message arrived through the input queue and the interface published every message
    const prefix = uniqueName('exit-service');
    const service = spawnScript(EXIT_SERVICE, {
      DATABASE_URL: db.url,
      AMQP_URL: brokerUrl(),
      QUEUE_PREFIX: prefix,
    });
    try {
      // When it has closed its application and does nothing more
      const code = await exitAfterClose(service, EXIT_DEADLINE_MS);

      // Then the process ends by itself, cleanly
      expect({ code, output: service.output() }).toEqual({ code: 0, output: 'closed\n' });
    } finally {
      const broker = await connectTestBroker();
      await broker.deleteQueues(
        `${prefix}.input`,
        `${prefix}.input.rejected`,
        `${prefix}.push.sink`,
        `${prefix}.push.ack`,
      );
      await broker.close();
    }
  });
});
