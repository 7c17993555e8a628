import { ConfigError, DEV_DATABASE_URL, DEV_TOKEN, loadConfig } from './ordinal-config.js';
import { resolveLogOptions } from '@ordinal/log/internal';
import { resolveSubscriptionsOptions } from '@ordinal/subscriptions/internal';
import { ordinalOptionsFrom } from './ordinal-options.factory.js';
import { amqpOptionsFrom } from '../interfaces/amqp-options.factory.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A secret as `ordinal token` makes them: 32 random bytes, base64url (43 characters). */
const SECRET = 'Xq3vB8n2Lr7tK9pW4sZ1cD6fH0jM5yQ2aE8uI3oR7gT';

describe('loadConfig', () => {
  it('fills in the local services and the development token in development', () => {
    const config = loadConfig({});
    expect(config.env).toBe('development');
    expect(config.port).toBe(8083);
    expect(config.databaseUrl).toBe(DEV_DATABASE_URL);
    expect(config.tokens.map((t) => t.secret)).toContain(DEV_TOKEN);
    expect(config.ordering).toBe('gapless');
    // The libraries' options are left to the libraries' defaults
    expect(config.duplicateWindow).toBeUndefined();
    expect(resolveLogOptions(ordinalOptionsFrom(config).log).duplicateWindow).toBe(2000);
  });

  it('listens on the loopback interface only in development unless HOST says otherwise', () => {
    // Given no HOST, development listens where only this machine reaches it
    expect(loadConfig({}).host).toBe('127.0.0.1');
    // And HOST is taken as given
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    // And production keeps listening on every interface (a container's port is published)
    const production = loadConfig({
      ORDINAL_ENV: 'production',
      DATABASE_URL: 'postgres://db/ordinal',
      ORDINAL_TOKENS: `ops:${SECRET}:read`,
    });
    expect(production.host).toBe('0.0.0.0');
  });

  it('parses ORDINAL_TOKENS with scopes', () => {
    const config = loadConfig({
      ORDINAL_TOKENS: 'billing:b-secret:read; ops:o-secret:read+write+admin',
    });
    const billing = config.tokens.find((t) => t.name === 'billing')!;
    expect([...billing.scopes]).toEqual(['read']);
    expect(config.tokens.find((t) => t.name === 'ops')!.scopes.has('admin')).toBe(true);
  });

  it.each([
    [{ ORDINAL_TOKENS: 'broken' }, /name:secret:scope/],
    [{ ORDINAL_TOKENS: 'a:b:fly' }, /unknown scopes: fly/],
    [{ PORT: 'eighty' }, /PORT must be an integer/],
    [{ ORDINAL_ORDERING: 'random' }, /ORDINAL_ORDERING must be one of gapless, concurrent/],
    [{ ORDINAL_ROLE: 'replica' }, /ORDINAL_ROLE must be one of primary, replica-reader/],
    [{ ORDINAL_ROLE: 'replica-reader' }, /ORDINAL_ROLE=replica-reader needs DATABASE_URL/],
    [{ ORDINAL_ENV: 'production', DATABASE_URL: 'postgres://x/y' }, /needs ORDINAL_TOKENS/],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('defaults nothing in production', () => {
    const config = loadConfig({
      ORDINAL_ENV: 'production',
      DATABASE_URL: 'postgres://db/ordinal',
      ORDINAL_TOKENS: `ops:${SECRET}:read`,
    });
    expect(config.tokens.map((t) => t.secret)).toEqual([SECRET]);
    expect(config.amqpUrl).toBeNull();
    expect(config.createDatabase).toBe(false);
  });

  it('a replica reader (ORDINAL_ROLE=replica-reader) reads only: no StartMarker, no AMQP, no database creation, a 200 ms live poll', () => {
    const config = loadConfig({
      ORDINAL_ROLE: 'replica-reader',
      DATABASE_URL: 'postgres://replica/db',
      AMQP_URL: 'amqp://broker',
    });
    expect(config.role).toBe('replica-reader');
    expect(config.amqpUrl).toBeNull();
    expect(config.createDatabase).toBe(false);
    const options = ordinalOptionsFrom(config);
    expect(resolveLogOptions(options.log).livePollMs).toBe(200);
    expect(options.startMarker).toBe(false);
    expect(options.log?.role).toBe('replica-reader');
    // An explicit poll wins; a primary keeps its defaults.
    const explicit = loadConfig({
      ORDINAL_ROLE: 'replica-reader',
      DATABASE_URL: 'postgres://replica/db',
      ORDINAL_LIVE_POLL_MS: '50',
    });
    expect(resolveLogOptions(ordinalOptionsFrom(explicit).log).livePollMs).toBe(50);
    const primary = ordinalOptionsFrom(loadConfig({}));
    expect({
      role: resolveLogOptions(primary.log).role,
      livePollMs: resolveLogOptions(primary.log).livePollMs,
      startMarker: primary.startMarker,
    }).toEqual({ role: 'primary', livePollMs: 1000, startMarker: true });
  });

  it('carries the ownership settings into the OrdinalModule options (ORDINAL_TAKEOVER_MS, ORDINAL_STUCK_AFTER_MS)', () => {
    const defaults = ordinalOptionsFrom(loadConfig({}));
    expect(resolveLogOptions(defaults.log).takeoverMs).toBe(5000);
    expect(resolveSubscriptionsOptions(defaults.subscriptions).stuckAfterMs).toBe(60_000);
    const options = ordinalOptionsFrom(
      loadConfig({ ORDINAL_TAKEOVER_MS: '2500', ORDINAL_STUCK_AFTER_MS: '1500' }),
    );
    expect(options.log?.takeoverMs).toBe(2500);
    expect(options.subscriptions?.stuckAfterMs).toBe(1500);
    // The bound is checked once, where the option is resolved; the error names the variable
    const tooShort = ordinalOptionsFrom(loadConfig({ ORDINAL_TAKEOVER_MS: '100' }));
    expect(() => resolveLogOptions(tooShort.log)).toThrow(/ORDINAL_TAKEOVER_MS/);
    // The environment reader only parses
    expect(() => loadConfig({ ORDINAL_TAKEOVER_MS: 'soon' })).toThrow(
      /ORDINAL_TAKEOVER_MS must be an integer/,
    );
  });

  it('reads ORDINAL_CORS_ORIGINS as exact origins, none by default, and refuses anything else', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(
      loadConfig({ ORDINAL_CORS_ORIGINS: 'https://app.example, http://localhost:5173' })
        .corsOrigins,
    ).toEqual(['https://app.example', 'http://localhost:5173']);
    for (const bad of ['*', 'https://app.example/', 'app.example', 'ftp://x.example'])
      expect(() => loadConfig({ ORDINAL_CORS_ORIGINS: bad })).toThrow(
        new ConfigError(
          `ORDINAL_CORS_ORIGINS: '${bad}' is not an origin; give each as scheme://host[:port] (e.g. https://app.example.com), comma-separated, no path, no wildcard`,
        ),
      );
  });

  it('production refuses a token secret shorter than 32 characters, naming the token (never the secret) and how to make one', () => {
    const env = {
      ORDINAL_ENV: 'production',
      DATABASE_URL: 'postgres://db/ordinal',
      ORDINAL_TOKENS: `ops:${SECRET}:read;ingest:12345:write`,
    };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(
      "ORDINAL_ENV=production needs token secrets of at least 32 random characters; 'ingest' has 5: make each with `npx ordinal token --name NAME --scopes SCOPES`",
    );
    // 32 characters are enough; development takes any secret
    expect(() =>
      loadConfig({ ...env, ORDINAL_TOKENS: `ingest:${'k'.repeat(32)}:write` }),
    ).not.toThrow();
    expect(loadConfig({ ORDINAL_TOKENS: 'ingest:12345:write' }).tokens[0].secret).toBe('12345');
  });

  describe('secrets from files (<NAME>_FILE, as Docker and Kubernetes mount them)', () => {
    let dir: string;
    const file = (name: string, content: string) => {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    };
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'ordinal-secrets-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('reads ORDINAL_TOKENS_FILE, DATABASE_URL_FILE and AMQP_URL_FILE, without the trailing line break', () => {
      const config = loadConfig({
        ORDINAL_ENV: 'production',
        ORDINAL_TOKENS_FILE: file('tokens', `ops:${SECRET}:read+write\n`),
        DATABASE_URL_FILE: file('db', 'postgres://ordinal:p%2Fw@postgres:5432/ordinal\r\n'),
        AMQP_URL_FILE: file('amqp', 'amqp://ordinal:pw@rabbitmq:5672\n'),
      });
      expect(config.tokens.map((t) => [t.name, t.secret])).toEqual([['ops', SECRET]]);
      expect(config.databaseUrl).toBe('postgres://ordinal:p%2Fw@postgres:5432/ordinal');
      expect(config.amqpUrl).toBe('amqp://ordinal:pw@rabbitmq:5672');
    });

    it('refuses a setting given both ways, and a file it cannot read, naming the setting and the path (not the content)', () => {
      const path = file('db', 'postgres://u:secret-password@h/d');
      expect(() => loadConfig({ DATABASE_URL: 'postgres://h/d', DATABASE_URL_FILE: path })).toThrow(
        new ConfigError('Set DATABASE_URL or DATABASE_URL_FILE, not both'),
      );
      const missing = join(dir, 'absent');
      expect(() => loadConfig({ ORDINAL_TOKENS_FILE: missing })).toThrow(
        new ConfigError(
          `ORDINAL_TOKENS_FILE names '${missing}', which cannot be read (ENOENT): mount the secret there or correct the path`,
        ),
      );
    });

    it('applies the file before the production rules (a short secret from a file is refused too)', () => {
      expect(() =>
        loadConfig({
          ORDINAL_ENV: 'production',
          DATABASE_URL: 'postgres://db/ordinal',
          ORDINAL_TOKENS_FILE: file('tokens', 'ops:short:read\n'),
        }),
      ).toThrow(/'ops' has 5/);
    });
  });

  describe('ORDINAL_MIGRATIONS', () => {
    it('defaults to run: the server and the AMQP library migrate at start', () => {
      const config = loadConfig({ AMQP_URL: 'amqp://broker' });
      expect(config.migrations).toBe('run');
      expect(ordinalOptionsFrom(config).migrate).toBe(true);
      expect(amqpOptionsFrom(config).migrate).toBe(true);
    });

    it('skip turns the migrations off (the start checks the schema instead); only is read as such', () => {
      const skip = loadConfig({ ORDINAL_MIGRATIONS: 'skip', AMQP_URL: 'amqp://broker' });
      expect(skip.migrations).toBe('skip');
      expect(ordinalOptionsFrom(skip).migrate).toBe(false);
      expect(amqpOptionsFrom(skip).migrate).toBe(false);
      expect(loadConfig({ ORDINAL_MIGRATIONS: 'only' }).migrations).toBe('only');
    });

    it.each([
      [
        { ORDINAL_MIGRATIONS: 'never' },
        /ORDINAL_MIGRATIONS must be one of skip, run, only, got 'never'/,
      ],
      [
        {
          ORDINAL_MIGRATIONS: 'only',
          ORDINAL_ROLE: 'replica-reader',
          DATABASE_URL: 'postgres://r/d',
        },
        /ORDINAL_MIGRATIONS=only runs the migrations on the primary/,
      ],
    ])('refuses %j', (env, message) => {
      expect(() => loadConfig(env)).toThrow(message);
    });
  });
});
