import { ConfigError, DEV_DATABASE_URL, DEV_TOKEN, loadConfig } from './ordinal-config.js';
import { resolveLogOptions } from '@ordinal/log/internal';
import { resolveSubscriptionsOptions } from '@ordinal/subscriptions/internal';
import { ordinalOptionsFrom } from './ordinal-options.factory.js';

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
      ORDINAL_TOKENS: 'ops:s3cret:read',
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
      ORDINAL_TOKENS: 'ops:s3cret:read',
    });
    expect(config.tokens.map((t) => t.secret)).toEqual(['s3cret']);
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
});
