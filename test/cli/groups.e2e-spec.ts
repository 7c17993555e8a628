import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';
import { runCli } from '../support/cli-process.js';

describe('ordinal groups, and consumer groups declared in the YAML file the server reads at start', () => {
  let db: TestDatabase;
  let server: TestServer;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'ordinal-groups-'));
    // Given a YAML file declaring one group
    writeFileSync(
      join(dir, 'groups.yaml'),
      [
        'consumerGroups:',
        '  - name: billing',
        '    source: { category: invoice }',
        '    strategy: pinned_by_stream',
        '    maxInFlight: 5',
      ].join('\n'),
    );
    server = await startServer(db.url, { ORDINAL_CONSUMER_GROUPS: join(dir, 'groups.yaml') });
    env = { ORDINAL_URL: server.baseUrl, ORDINAL_TOKEN: 'dev-ordinal-token' };
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the server defined the declared group at start; groups define, status, parked --replay and delete manage them', async () => {
    // Then the declared group exists with its settings
    const declared = await http(server.baseUrl, 'GET', '/api/consumer-groups/billing');
    expect(declared.body.definition).toMatchObject({
      source: { category: 'invoice' },
      strategy: 'pinned_by_stream',
      maxInFlight: 5,
    });
    // When a group is defined with the command, and a member parks one event
    const defined = await runCli(
      ['groups', 'define', 'orders', '{"source":{"types":["CliGroupOrder"]}}'],
      env,
    );
    expect(defined).toMatchObject({
      code: 0,
      stdout: 'Created consumer group orders (checkpoint 0)\n',
    });
    const published = await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'CliGroupOrder',
      content: { n: 1 },
    });
    const got = await http(server.baseUrl, 'POST', '/api/consumer-groups/orders/fetch', {
      memberId: 'cli-m',
      waitMs: 2000,
    });
    await http(server.baseUrl, 'POST', '/api/consumer-groups/orders/nack', {
      memberId: 'cli-m',
      epoch: got.body.epoch,
      indices: [published.body.id],
      action: 'park',
      reason: 'bad invoice',
    });
    // Then status lists both groups, and one group with its member
    const all = await runCli(['groups', 'status'], env);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(
      /^GROUP\s+STRATEGY\s+STATE\s+MEMBERS\s+CHECKPOINT\s+LAG\s+IN FLIGHT\s+READY\s+PARKED/,
    );
    expect(all.stdout).toMatch(/billing\s+pinned_by_stream\s+idle\s+0\s/);
    expect(all.stdout).toMatch(
      new RegExp(
        `orders\\s+round_robin\\s+active\\s+1\\s+${published.body.id}\\s+\\d+\\s+0\\s+0\\s+1`,
      ),
    );
    const one = await runCli(['groups', 'status', 'orders'], env);
    expect(one.stdout).toMatch(
      /MEMBER\s+EPOCH\s+ALIVE\s+IN FLIGHT\s+SERVER\s+LAST SEEN\ncli-m\s+1\s+yes\s+0\s/,
    );
    const json = JSON.parse((await runCli(['groups', 'status', 'orders', '--json'], env)).stdout);
    expect(json).toMatchObject({ group: 'orders', parked: 1, checkpoint: published.body.id });
    // And parked lists the event; --replay puts it back without moving the checkpoint
    const parked = await runCli(['groups', 'parked', 'orders'], env);
    expect(parked.stdout).toMatch(new RegExp(`${published.body.id}\\s+1\\s+\\S+\\s+bad invoice`));
    const replayed = await runCli(['groups', 'parked', 'orders', '--replay'], env);
    expect(replayed.stdout).toBe(
      `Replayed 1 parked events of orders (checkpoint stays ${published.body.id})\n`,
    );
    // And delete removes it; status of an unknown group is an error naming it
    expect((await runCli(['groups', 'delete', 'orders'], env)).code).toBe(0);
    const gone = await runCli(['groups', 'status', 'orders'], env);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain("No consumer group named 'orders'");
  });

  it.each([
    [
      'ackTimeoutMs: "5s"',
      'bad-timeout',
      /consumerGroups\[0\] \('bad-timeout'\): ackTimeoutMs must be/,
    ],
    [
      'strategy: random',
      'bad-strategy',
      /consumerGroups\[0\] \('bad-strategy'\): strategy must be/,
    ],
    ['ackTimeout: 5000', 'bad-key', /consumerGroups\[0\] \('bad-key'\): ackTimeout is not a field/],
  ])(
    'a bad entry stops the start naming it and its field, as PUT refuses it: %s',
    async (line, name, message) => {
      const file = join(dir, 'bad.yaml');
      writeFileSync(
        file,
        ['consumerGroups:', `  - name: ${name}`, '    source: { all: true }', `    ${line}`].join(
          '\n',
        ),
      );
      const refused = await startServer(db.url, { ORDINAL_CONSUMER_GROUPS: file }).then(
        async (started) => {
          await started.close();
          return new Error('the server started');
        },
        (error: unknown) => error as Error,
      );
      expect(refused.message).toMatch(message);
    },
  );

  it('refuses a usage error with exit 2', async () => {
    const bad = await runCli(['groups', 'define', 'x'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('groups define needs a group name and its definition as JSON');
  });
});
