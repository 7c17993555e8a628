// Resolves the services every suite uses, once per run:
// DATABASE_URL / AMQP_URL when set, else the local services, else (only where a Docker
// engine runs) testcontainers. Workers inherit the resolved URLs through process.env.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const LOCAL_PG = 'postgres://postgres@127.0.0.1:5432/postgres';
const LOCAL_AMQP = 'amqp://guest:guest@127.0.0.1:5672';

function reachable(url, defaultPort) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || defaultPort) });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** What to do when no broker answers (test/support/amqp-broker.ts says the same). */
const NO_BROKER =
  `No RabbitMQ answers on ${LOCAL_AMQP.replace('guest:guest@', '')} and no Docker engine runs: ` +
  'the AMQP suites need a broker. Start one (`docker compose -f docker/compose.yml up -d ' +
  'rabbitmq`, or `sudo service rabbitmq-server start`) or set AMQP_URL to one.';

const dockerEngine = () => existsSync('/var/run/docker.sock') || Boolean(process.env.DOCKER_HOST);

export default async function globalSetup() {
  globalThis.__ORDINAL_CONTAINERS__ = [];
  if (!process.env.DATABASE_URL) {
    if (await reachable(LOCAL_PG, 5432)) {
      process.env.DATABASE_URL = LOCAL_PG;
    } else if (dockerEngine()) {
      const { GenericContainer, Wait } = await import('testcontainers');
      const pg = await new GenericContainer('postgres:16-alpine')
        .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
        .withExposedPorts(5432)
        .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
        .start();
      globalThis.__ORDINAL_CONTAINERS__.push(pg);
      process.env.DATABASE_URL = `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`;
    } else {
      throw new Error(
        'No PostgreSQL: set DATABASE_URL, start the local service, or provide a Docker engine',
      );
    }
  }
  if (!process.env.AMQP_URL) {
    if (await reachable(LOCAL_AMQP, 5672)) {
      process.env.AMQP_URL = LOCAL_AMQP;
    } else if (dockerEngine()) {
      const { GenericContainer, Wait } = await import('testcontainers');
      const mq = await new GenericContainer('rabbitmq:4-management-alpine')
        .withExposedPorts(5672)
        .withWaitStrategy(Wait.forLogMessage(/Server startup complete/))
        .start();
      globalThis.__ORDINAL_CONTAINERS__.push(mq);
      process.env.AMQP_URL = `amqp://guest:guest@${mq.getHost()}:${mq.getMappedPort(5672)}`;
    } else {
      // Suites that test AMQP (interfaces, the input queue, the delivery property) need it:
      // running them without a broker would test less and still pass.
      throw new Error(NO_BROKER);
    }
  }
  await migratedTemplate();
}

/** The built server (`npm test` builds before Jest starts). */
const SERVER_MAIN = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'apps',
  'eventstore',
  'dist',
  'main.js',
);

/** Runs one statement on the server's maintenance database (global-teardown.mjs uses it too). */
export async function onServer(sql) {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A database every migration of the server has run on, once per run, that suites' databases
 * are created from (test/support/test-database.ts): a suite then starts on the schema instead
 * of running every migration (about 50) again, 1.3 s on a quiet machine, some 260 times a run. What a
 * suite's own code then finds pending (a migration newer than the build, its own) still runs.
 * Without a build (a single suite run with `npx jest`), or with ORDINAL_TEST_TEMPLATE=0, every
 * database starts blank as before.
 */
async function migratedTemplate() {
  if (process.env.ORDINAL_TEST_TEMPLATE === '0' || !existsSync(SERVER_MAIN)) {
    process.env.ORDINAL_TEST_TEMPLATE = '0';
    return;
  }
  const name = `ordinal_test_template_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  await onServer(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  const output = [];
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [SERVER_MAIN], {
      env: { ...process.env, DATABASE_URL: url.toString(), ORDINAL_MIGRATIONS: 'only' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => {
      output.push(Buffer.from(error.message));
      resolve(1);
    });
    child.on('close', resolve);
  });
  if (code !== 0) {
    await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    throw new Error(
      `The test template database could not be migrated (ORDINAL_MIGRATIONS=only exited ${code}):\n${Buffer.concat(output).toString()}`,
    );
  }
  process.env.ORDINAL_TEST_TEMPLATE = name;
  globalThis.__ORDINAL_TEMPLATE__ = name;
}
