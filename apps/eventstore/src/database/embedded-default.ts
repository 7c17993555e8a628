import { Socket } from 'node:net';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@ordinal/nestjs';
import { ConfigError, type OrdinalConfig } from '../config/ordinal-config.js';

type Env = Record<string, string | undefined>;

/** Where the embedded database keeps its data unless ORDINAL_EMBEDDED_DIR says. */
export const EMBEDDED_DEFAULT_DIR = '.ordinal/pglite';
/**
 * The embedded database's pool: one connection. PGlite is one PostgreSQL session shared by
 * every socket connection, so two pooled connections would collide on session state (the
 * writer's named prepared statement: "prepared statement … already exists"); its queries run
 * one at a time anyway.
 */
export const EMBEDDED_POOL_SIZE = 1;

/** What development mode settled on before the server starts. */
export interface DevelopmentServices {
  config: OrdinalConfig;
  /** The embedded database when the server runs on one (stop it after the server). */
  embedded: EmbeddedPostgres | null;
  /** One line each, for the start-up log: what was chosen and how to choose otherwise. */
  notes: string[];
}

/** Whether something accepts a TCP connection at host:port within `timeoutMs`. */
export function answers(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.connect(port, host);
  });
}

function flag(env: Env, name: string): boolean | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new ConfigError(`${name} must be 1 or 0 (true or false), got '${raw}'`);
}

/**
 * Development defaults for a machine with nothing but Node: with no DATABASE_URL and nothing
 * on the local PostgreSQL port, an embedded PostgreSQL (PGlite) with its data in
 * `.ordinal/pglite/` (ORDINAL_EMBEDDED=1 forces it, =0 never); with no AMQP_URL and nothing on
 * the local RabbitMQ port, no AMQP. Production never does either: it runs on what it is told.
 */
export async function resolveDevelopmentServices(
  config: OrdinalConfig,
  env: Env,
  probe = answers,
): Promise<DevelopmentServices> {
  const forced = flag(env, 'ORDINAL_EMBEDDED');
  if (config.env === 'production') {
    if (forced)
      throw new ConfigError(
        'ORDINAL_EMBEDDED=1 is for development only; production runs on the PostgreSQL that DATABASE_URL names',
      );
    return { config, embedded: null, notes: [] };
  }
  const notes: string[] = [];
  let next = config;
  let reason: string | null = null;
  if (forced) reason = 'ORDINAL_EMBEDDED=1';
  else if (forced === null && !env.DATABASE_URL && !env.PGHOST && !(await probe('127.0.0.1', 5432)))
    reason = 'DATABASE_URL is not set and nothing answers on 127.0.0.1:5432';
  let embedded: EmbeddedPostgres | null = null;
  if (reason) {
    if (config.ordering === 'concurrent') {
      throw new ConfigError(
        "ORDINAL_ORDERING=concurrent needs a PostgreSQL server: its low watermark reads other sessions' locks (pg_locks), and the embedded database (PGlite) is one session. Use gapless (the default) here, or set DATABASE_URL",
      );
    }
    const dataDir = env.ORDINAL_EMBEDDED_DIR || EMBEDDED_DEFAULT_DIR;
    const dbPoolSize = EMBEDDED_POOL_SIZE;
    if (env.ORDINAL_DB_POOL_SIZE)
      notes.push(
        `ORDINAL_DB_POOL_SIZE=${env.ORDINAL_DB_POOL_SIZE} is ignored on the embedded database: it takes one connection (one PostgreSQL session)`,
      );
    // The pool's connection, the LISTEN connection, the migration run's own two and the start-up check share the socket.
    embedded = await startEmbeddedPostgres({ dataDir, maxConnections: 8 });
    next = { ...next, databaseUrl: embedded.url, createDatabase: false, dbPoolSize };
    notes.push(
      `Embedded PostgreSQL (PGlite) with its data in ${dataDir}/ (${reason}); for a real server set DATABASE_URL=postgres://user@host:5432/db, or start one: docker compose -f docker/compose.yml up -d`,
    );
  }
  if (config.amqpUrl && env.AMQP_URL === undefined) {
    const broker = new URL(config.amqpUrl);
    if (!(await probe(broker.hostname, Number(broker.port || 5672)))) {
      next = { ...next, amqpUrl: null };
      notes.push(
        `No RabbitMQ answers on ${broker.hostname}:${broker.port || 5672}: running without AMQP (no input queue, no push interfaces); set AMQP_URL to use a broker`,
      );
    }
  }
  return { config: next, embedded, notes };
}
