import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { listeningPort, spawnServer, type ServerProcess } from '../support/server-process.js';
import { DEV_AUTH, http, waitFor } from '../support/test-server.js';
import { ownershipTimings } from '@ordinal/ownership';
import {
  brokerUrl,
  collect,
  connectTestBroker,
  uniqueName,
  type Collector,
  type TestBroker,
} from '../support/amqp-broker.js';

interface Listed {
  name: string;
  state: string;
  position: number;
  local: boolean;
  owner: {
    id: string;
    pid: number | null;
    host: string | null;
    heartbeatAgeMs: number | null;
    self: boolean;
    state: string | null;
    position: number | null;
  } | null;
}

/**
 * A realtime interface on two servers: a takeover (graceful or after kill -9) publishes what
 * committed between the old owner's last publish and the new owner's start (the owner records
 * how far it published on its lease row; the next owner starts there). Messages are written
 * through the server that is not stopped, all along.
 */
/** The takeover bound of both servers. */
const TAKEOVER_MS = 2000;

describe('realtime interface takeover across servers', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  let dir: string;
  let file: string;
  let sink: Collector;
  const servers: { port: number; server: ServerProcess }[] = [];
  let notify: string;

  const start = async () => {
    const server = spawnServer({
      DATABASE_URL: db.url,
      PORT: '0',
      AMQP_URL: brokerUrl(),
      ORDINAL_AMQP_INPUT_QUEUE: 'off',
      ORDINAL_INTERFACES: file,
      ORDINAL_TAKEOVER_MS: String(TAKEOVER_MS),
    });
    const port = await listeningPort(server, 60_000);
    servers.push({ port, server });
  };
  const list = async (port: number): Promise<Listed[]> =>
    (await http(`http://127.0.0.1:${port}`, 'GET', '/api/interfaces', undefined, DEV_AUTH)).body
      .interfaces;
  const ownerOf = async () =>
    waitFor(
      async () => {
        for (const s of servers)
          if ((await list(s.port)).some((i) => i.name === notify && i.state === 'live')) return s;
        return null;
      },
      30_000,
      'a live owner of the realtime interface',
    );
  const indices = () => sink.messages.map((m) => Number(m.properties.headers!.index));

  /** Writes Paid messages through `port` until `stop()`; resolves with their ids. */
  const writeAlong = (port: number) => {
    let running = true;
    const run = Math.random().toString(36).slice(2);
    const done = (async () => {
      const ids: number[] = [];
      for (let n = 0; running; n++) {
        const res = await http(
          `http://127.0.0.1:${port}`,
          'PUT',
          '/api/events/message',
          { messageType: 'Paid', content: { run, n } },
          DEV_AUTH,
        );
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
      return ids;
    })();
    return { stop: () => ((running = false), done) };
  };

  // Each test has its own database, interface and two servers: none relies on what an earlier one left.
  beforeEach(async () => {
    notify = uniqueName('takeover-notify');
    db = await createTestDatabase();
    broker = await connectTestBroker();
    dir = mkdtempSync(join(tmpdir(), 'ordinal-realtime-takeover-'));
    file = join(dir, 'interfaces.yaml');
    writeFileSync(
      file,
      `interfaces:\n  - name: ${notify}\n    type: realtime\n    includeTypes: [Paid]\n`,
    );
    await start();
    await start();
    sink = await collect(broker, `${notify}.sink`);
  });
  afterEach(async () => {
    await sink?.stop();
    await Promise.all(servers.splice(0).map((s) => s.server.stop()));
    await broker?.deleteQueues(`${notify}.sink`);
    await broker?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every server lists the interface with its owner (pid@host, heartbeat age, state, position)', async () => {
    // Given the server that publishes it
    const owner = await ownerOf();
    const standby = servers.find((s) => s !== owner)!;
    await http(
      `http://127.0.0.1:${standby.port}`,
      'PUT',
      '/api/events/message',
      { messageType: 'Paid', content: { first: true } },
      DEV_AUTH,
    );
    // Then the standby server lists it as standby, with the owner's pid, heartbeat age, state and position
    const seen = await waitFor(
      async () => {
        const entry = (await list(standby.port)).find((i) => i.name === notify);
        return entry?.owner && entry.owner.position !== null && entry.owner.position > 0
          ? entry
          : null;
      },
      10_000,
      'the owner as the standby server sees it',
    );
    expect(seen.state).toBe('standby');
    expect(seen.local).toBe(true);
    expect(seen.owner).toMatchObject({ pid: owner.server.child.pid, self: false, state: 'live' });
    expect(typeof seen.owner!.host).toBe('string');
    expect(seen.owner!.heartbeatAgeMs).toBeGreaterThanOrEqual(0);
    // (an owner is listed only while its lease is live, and a renewal sets the lease to expire
    // ttl after the heartbeat: the age is under ttl whatever the load)
    expect(seen.owner!.heartbeatAgeMs).toBeLessThanOrEqual(ownershipTimings(TAKEOVER_MS).ttlMs);
    // And the owner lists itself
    expect((await list(owner.port)).find((i) => i.name === notify)!.owner).toMatchObject({
      self: true,
      state: 'live',
    });
  });

  it.each(['SIGTERM', 'SIGKILL'] as const)(
    '%s of the owner while messages commit: the new owner publishes from where the old one left off; nothing lost',
    async (signal) => {
      // Given the owner, and messages written all along through the other server
      const owner = await ownerOf();
      const other = servers.find((s) => s !== owner)!;
      const writer = writeAlong(other.port);
      await waitFor(() => indices().length > 0 || null, 10_000, 'the first publishes');
      // When the owner is stopped (gracefully, or killed) while messages keep committing
      await owner.server.stop(signal);
      servers.splice(servers.indexOf(owner), 1);
      // Then the other server takes over, and what committed meanwhile is published
      await waitFor(
        async () =>
          (await list(other.port)).some((i) => i.name === notify && i.state === 'live') || null,
        15_000,
        'the takeover',
      );
      const before = indices().length;
      await waitFor(
        () => indices().length > before + 20 || null,
        15_000,
        'publishes after the takeover',
      );
      const ids = await writer.stop();
      const last = Math.max(...ids);
      await waitFor(() => indices().includes(last) || null, 15_000, 'the last message published');
      const published = new Set(indices());
      expect(ids.filter((id) => !published.has(id))).toEqual([]);
    },
  );
});
