import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../config/ordinal-config.js';
import { resolveDevelopmentServices } from './embedded-default.js';

/** A probe that answers for the given ports only, recording what it was asked. */
function probeAnswering(...ports: number[]) {
  const asked: number[] = [];
  const probe = (_host: string, port: number) => {
    asked.push(port);
    return Promise.resolve(ports.includes(port));
  };
  return { probe, asked };
}

describe('development defaults: the embedded database and AMQP when nothing answers', () => {
  it('starts the embedded database when DATABASE_URL is unset and nothing answers on 5432, with a small pool, and says how to use a real server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ordinal-embedded-default-'));
    const env = { ORDINAL_EMBEDDED_DIR: join(dir, 'pglite'), AMQP_URL: '' };
    const { probe } = probeAnswering();
    const services = await resolveDevelopmentServices(loadConfig(env), env, probe);
    try {
      expect(services.embedded).not.toBeNull();
      expect(services.config.databaseUrl).toBe(services.embedded!.url);
      expect(services.config).toMatchObject({
        dbPoolSize: 1,
        createDatabase: false,
        amqpUrl: null,
      });
      expect(services.notes).toEqual([
        expect.stringMatching(
          /^Embedded PostgreSQL \(PGlite\) with its data in .*pglite\/ \(DATABASE_URL is not set and nothing answers on 127\.0\.0\.1:5432\); for a real server set DATABASE_URL=/,
        ),
      ]);
      const client = new pg.Client({ connectionString: services.config.databaseUrl });
      await client.connect();
      const { rows } = await client.query<{ v: string }>('SELECT version() AS v');
      expect(rows[0].v).toMatch(/PGlite/);
      await client.end();
    } finally {
      await services.embedded?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('uses the configured or local PostgreSQL otherwise, and never embeds in production', async () => {
    const local = probeAnswering(5432);
    const onLocal = await resolveDevelopmentServices(
      loadConfig({ AMQP_URL: '' }),
      { AMQP_URL: '' },
      local.probe,
    );
    expect(onLocal.embedded).toBeNull();
    expect(onLocal.notes).toEqual([]);
    const configured = probeAnswering();
    const withUrl = await resolveDevelopmentServices(
      loadConfig({ DATABASE_URL: 'postgres://db:5432/x', AMQP_URL: '' }),
      { DATABASE_URL: 'postgres://db:5432/x', AMQP_URL: '' },
      configured.probe,
    );
    expect(withUrl.embedded).toBeNull();
    expect(configured.asked).toEqual([]);
    const off = await resolveDevelopmentServices(
      loadConfig({ AMQP_URL: '' }),
      { ORDINAL_EMBEDDED: '0', AMQP_URL: '' },
      probeAnswering().probe,
    );
    expect(off.embedded).toBeNull();
    const prodEnv = {
      ORDINAL_ENV: 'production',
      DATABASE_URL: 'postgres://db/x',
      ORDINAL_TOKENS: `ops:${'s'.repeat(43)}:admin`,
    };
    const prod = probeAnswering();
    expect(
      (await resolveDevelopmentServices(loadConfig(prodEnv), prodEnv, prod.probe)).embedded,
    ).toBeNull();
    expect(prod.asked).toEqual([]);
    await expect(
      resolveDevelopmentServices(
        loadConfig(prodEnv),
        { ...prodEnv, ORDINAL_EMBEDDED: '1' },
        prod.probe,
      ),
    ).rejects.toThrow(/for development only/);
    await expect(
      resolveDevelopmentServices(loadConfig({}), { ORDINAL_EMBEDDED: 'yes' }, prod.probe),
    ).rejects.toThrow(/ORDINAL_EMBEDDED must be 1 or 0/);
  });

  it('runs without AMQP when AMQP_URL is unset and no broker answers, and says so; a set AMQP_URL is kept', async () => {
    const noBroker = await resolveDevelopmentServices(
      loadConfig({ DATABASE_URL: 'postgres://db/x' }),
      { DATABASE_URL: 'postgres://db/x' },
      probeAnswering().probe,
    );
    expect(noBroker.config.amqpUrl).toBeNull();
    expect(noBroker.notes).toEqual([
      'No RabbitMQ answers on 127.0.0.1:5672: running without AMQP (no input queue, no push interfaces); set AMQP_URL to use a broker',
    ]);
    const env = { DATABASE_URL: 'postgres://db/x', AMQP_URL: 'amqp://broker:5672' };
    const kept = await resolveDevelopmentServices(loadConfig(env), env, probeAnswering().probe);
    expect(kept.config.amqpUrl).toBe('amqp://broker:5672');
    expect(kept.notes).toEqual([]);
  });
});
