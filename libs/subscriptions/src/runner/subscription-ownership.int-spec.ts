import type { INestApplicationContext } from '@nestjs/common';
import { LogWriter } from '@ordinal/log';
import { ConsumerOwnership } from '@ordinal/ownership';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { SubscriptionsService } from '../subscriptions.service.js';

const TAKEOVER_MS = 3000;

describe('One owner per subscription across applications on one database (lease rows, fenced commits)', () => {
  let db: TestDatabase;
  const apps: INestApplicationContext[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close().catch(() => undefined)));
    await db?.drop();
  });

  const start = async () => {
    const app = await startProjectionsApp(db.url, { log: { takeoverMs: TAKEOVER_MS } });
    apps.push(app);
    return app;
  };
  const append = (app: INestApplicationContext, count: number) =>
    app.get(LogWriter).append({
      messages: Array.from({ length: count }, (_, n) => ({
        messageType: 'Counted',
        body: { n },
      })),
    });
  const checkpoint = async (name: string) =>
    Number(
      (
        await db.query<{ position: string }>('SELECT position FROM checkpoints WHERE name = $1', [
          name,
        ])
      )[0]?.position ?? 0,
    );

  it('runs a subscription in one application only; a graceful stop hands it over at once, from the checkpoint', async () => {
    // Given two applications subscribing under one name
    const [a, b] = [await start(), await start()];
    const seen = { a: [] as number[], b: [] as number[] };
    a.get(SubscriptionsService).subscribe({
      name: 'shared',
      stream: { types: ['Counted'] },
      handle: (m) => void seen.a.push(m.id),
    });
    b.get(SubscriptionsService).subscribe({
      name: 'shared',
      stream: { types: ['Counted'] },
      handle: (m) => void seen.b.push(m.id),
    });
    // When messages arrive
    const first = await append(a, 20);
    const last = (first.entries.at(-1) as { message: { id: number } }).message.id;
    await waitFor(async () => (await checkpoint('shared')) >= last, 10_000, 'the first 20 applied');
    // Then exactly one of them applied them, and the other stands by
    const states = [a, b].map((app) => app.get(SubscriptionsService).get('shared').status().state);
    expect(states.sort()).toEqual(['running', 'standby']);
    const [owner, other] = seen.a.length > 0 ? [a, b] : [b, a];
    expect(seen.a.length === 0 || seen.b.length === 0).toBe(true);
    // When the owner stops gracefully, it gives its lease up (no waiting for an expiry) and the other continues from the checkpoint
    await owner.close();
    apps.splice(apps.indexOf(owner), 1);
    const [released] = await db.query<{ owner: string | null }>(
      `SELECT owner FROM consumer_leases WHERE name = 'shared'`,
    );
    expect([null, other.get(ConsumerOwnership).owner]).toContain(released.owner);
    const handedAt = Date.now();
    const more = await append(other, 5);
    const end = (more.entries.at(-1) as { message: { id: number } }).message.id;
    await waitFor(
      async () => (await checkpoint('shared')) >= end,
      10_000,
      'the other to take over',
    );
    expect(Date.now() - handedAt).toBeLessThan(TAKEOVER_MS * 3);
    const all = [...seen.a, ...seen.b];
    expect(new Set(all).size).toBe(all.length);
    await other.close();
    apps.splice(apps.indexOf(other), 1);
  });

  it('a batch whose lease was taken over meanwhile cannot commit; its process finds out and stands by', async () => {
    // Given an application whose handler is held in the middle of a batch
    const app = await start();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered: number | null = null;
    const subscription = app.get(SubscriptionsService).subscribe({
      name: 'fenced',
      stream: { types: ['Fenced'] },
      handle: async (message) => {
        entered = message.id;
        await held;
      },
    });
    const appended = await app
      .get(LogWriter)
      .append({ messages: [{ messageType: 'Fenced', body: {} }] });
    const index = (appended.entries[0] as { message: { id: number } }).message.id;
    await waitFor(() => entered === index, 10_000, 'the handler to be entered');
    // The checkpoint the batch in flight started from: 0, or the positions before the message
    // when the subscription's first read came before the append (an empty batch committed then)
    const before = await checkpoint('fenced');
    expect(before).toBeLessThan(index);
    // When another owner claims the lease (as after an expiry) while the batch is in flight
    await db.query(
      `UPDATE consumer_leases SET owner = 'someone-else', epoch = epoch + 1, expires_at = now() + interval '1 hour' WHERE name = 'fenced'`,
    );
    release();
    // Then the batch rolls back (the checkpoint did not move), and the subscription stands by
    await waitFor(
      () => subscription.status().state === 'standby',
      10_000,
      'standby after losing the lease',
    );
    expect(await checkpoint('fenced')).toBe(before);
  });
  it('forgets processes that died long ago (10x the bound): their rows go, their leases lose the dead owner, reports do not list them', async () => {
    // Given a process that died an hour ago still named on a lease, and one that died a second ago
    await db.query(`INSERT INTO consumer_processes (owner, pid, host, heartbeat_at, expires_at, groups) VALUES
      ('ghost:1:long', 1, 'ghost', now() - interval '1 hour', now() - interval '1 hour', '{forgotten}'),
      ('ghost:2:recent', 2, 'ghost', now() - interval '1 second', now() - interval '1 second', '{recent}')`);
    await db.query(`INSERT INTO consumer_leases (name, kind, group_name, owner, epoch, expires_at, heartbeat_at) VALUES
      ('forgotten', 'subscription', 'forgotten', 'ghost:1:long', 3, now() - interval '1 hour', now() - interval '1 hour'),
      ('recent', 'subscription', 'recent', 'ghost:2:recent', 1, now() - interval '1 second', now() - interval '1 second')`);
    // When a live process with a consumer ticks
    const app = await start();
    app
      .get(SubscriptionsService)
      .subscribe({ name: 'cleaner', stream: { types: ['Counted'] }, handle: () => undefined });
    // Then the long-dead process is forgotten, and the lease it held names no owner (its epoch kept)
    await waitFor(
      async () =>
        (await db.query('SELECT 1 FROM consumer_processes WHERE owner = $1', ['ghost:1:long']))
          .length === 0 || null,
      10_000,
      'the dead process row to go',
    );
    const [lease] = await db.query<{ owner: string | null; epoch: string }>(
      `SELECT owner, epoch FROM consumer_leases WHERE name = 'forgotten'`,
    );
    expect(lease).toEqual({ owner: null, epoch: '3' });
    // And the one that died a second ago is kept (within the bound, it may only be frozen)
    expect(
      await db.query('SELECT owner FROM consumer_processes WHERE owner = $1', ['ghost:2:recent']),
    ).toHaveLength(1);
    expect(
      (
        await db.query<{ owner: string }>(`SELECT owner FROM consumer_leases WHERE name = 'recent'`)
      )[0].owner,
    ).toBe('ghost:2:recent');
    // And the report lists no dead process as an owner
    const reports = await app.get(SubscriptionsService).report();
    expect(reports.filter((r) => r.owner && r.owner.host === 'ghost')).toEqual([]);
    await app.close();
    apps.splice(apps.indexOf(app), 1);
  });
});
