import type { INestApplicationContext } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { LogWriter } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { ConsumerGroupNotFoundError, MemberLeaseLostError } from '../errors/index.js';
import { ConsumerGroupsService } from './consumer-groups.service.js';
import { lockGroup } from './sql/group-rows.sql.js';

/**
 * Counts the statements `work` sends to PostgreSQL (each one round trip), whatever connection
 * carries them: pg's Client.query, seen only inside `work`'s async context, so the app's
 * background work (the watermark, listeners) is not counted.
 */
async function statementsOf<T>(
  work: () => Promise<T>,
): Promise<{ result: T; statements: string[] }> {
  const scope = new AsyncLocalStorage<string[]>();
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = prototype.query;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    scope.getStore()?.push(typeof first === 'string' ? first : (first?.text ?? ''));
    return query.apply(this, args);
  };
  try {
    const statements: string[] = [];
    const result = await scope.run(statements, work);
    return { result, statements };
  } finally {
    prototype.query = query;
  }
}

/** Holds a group's row lock from outside until released (as another server's transaction would). */
async function holdGroupLock(url: string, group: string) {
  const client = new pg.Client({ connectionString: url, application_name: 'group-lock-holder' });
  await client.connect();
  await client.query('BEGIN');
  const { text, values } = lockGroup(group);
  await client.query(text, values);
  return {
    client,
    /** Resolves once `n` statements on groups wait for a lock (this one's, or a waiter's before them). */
    waiters: async (n: number) => {
      for (const until = Date.now() + 10_000; Date.now() < until;) {
        // (inside a transaction, pg_stat_activity is a snapshot taken once unless cleared)
        await client.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND cardinality(pg_blocking_pids(pid)) > 0
             AND query ~ '(consumer_groups|ordinal_group_)'`,
        );
        if (rows[0].n >= n) return;
        await new Promise((r) => setImmediate(r));
      }
      throw new Error(`fewer than ${n} sessions waited for the group's lock`);
    },
    release: async () => {
      await client.query('COMMIT');
      await client.end();
    },
  };
}

/** A writer like Ordinal's concurrent flush (xid first, position drawn inside the INSERT), held open. */
async function heldWriter(url: string, messageType: string) {
  const client = new pg.Client({ connectionString: url, application_name: 'held-writer' });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT pg_current_xact_id()');
  const { rows } = await client.query<{ index: number }>(
    `INSERT INTO messages (index, message_type, user_id, body, content_hash)
     VALUES (nextval('messages_index_seq'), $1, 'u-held', '{"held":true}'::jsonb, 'h') RETURNING index::int AS index`,
    [messageType],
  );
  return {
    position: rows[0].index,
    commit: async () => {
      await client.query('COMMIT');
      await client.end();
    },
  };
}

describe('consumer groups in concurrent ordering: holes and late arrivals', () => {
  let db: TestDatabase;
  const apps: INestApplicationContext[] = [];
  const start = async (log: Record<string, unknown>) => {
    const app = await startProjectionsApp(db.url, {
      log: { ordering: 'concurrent', lateRescanMs: 50, ...log },
      subscriptions: { lateCheckMs: 50, groupPollMs: 20 },
    });
    apps.push(app);
    return { groups: app.get(ConsumerGroupsService), writer: app.get(LogWriter) };
  };
  const append = async (writer: LogWriter, messageType: string) => {
    const [entry] = (await writer.append({ messages: [{ messageType, body: {} }] })).entries;
    if (entry.status !== 'created') throw new Error('not stored');
    return entry.message.id;
  };

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
    await db?.drop();
  });

  it('fetches ready events in two statements (the claim, then the render), also when the claim reads the log on up to the safe head it knows', async () => {
    // Given two groups of R over four R events, and members that fetched once from each (the
    // first fetch of a group reads its definition, the safe head and the log)
    const { groups, writer } = await start({});
    await groups.define('trips', { source: { types: ['R'] } });
    await groups.define('trips-b', { source: { types: ['R'] }, strategy: 'pinned_by_stream' });
    const ids: number[] = [];
    for (let n = 0; n < 4; n++) ids.push(await append(writer, 'R'));
    const first = await groups.fetch('trips', { memberId: 'm', max: 1 });
    expect(first.events.map((e) => e.index)).toEqual([ids[0]]);
    await groups.fetch('trips-b', { memberId: 'n', max: 0 });
    // When m fetches events the group has ready
    const ready = await statementsOf(() => groups.fetch('trips', { memberId: 'm', max: 2 }));
    // Then it gets them, in two statements: the claim, then the render after the group's lock
    expect(ready.result.events.map((e) => [e.index, e.deliveryAttempt])).toEqual([
      [ids[1], 1],
      [ids[2], 1],
    ]);
    expect(ready.statements).toHaveLength(2);
    expect(ready.statements[0]).toContain('ordinal_group_claim');
    expect(ready.statements[1]).not.toContain('ordinal_group_claim');
    // When n fetches from the group that has read nothing yet (the log is read on in the claim)
    const readOn = await statementsOf(() => groups.fetch('trips-b', { memberId: 'n', max: 10 }));
    // Then it gets every event, rendered, in the same two statements
    expect(readOn.result.events.map((e) => e.index)).toEqual(ids);
    expect(
      readOn.result.events.every(
        (e) => (JSON.parse(e.json) as { messageType: string }).messageType === 'R',
      ),
    ).toBe(true);
    expect(readOn.statements).toHaveLength(2);
  });

  it('renders the events it claims that committed while its statement waited for the group', async () => {
    // Given a group of S that read one event, and a fetch whose statement waits for the group
    // while two more S commit and another server's fetch reads them on
    const { groups, writer } = await start({ ordering: 'gapless' });
    await groups.define('waited', { source: { types: ['S'] } });
    const before = await append(writer, 'S');
    const got = await groups.fetch('waited', { memberId: 'm', waitMs: 2000 });
    expect(got.events.map((e) => e.index)).toEqual([before]);
    await groups.ack('waited', 'm', got.epoch, [before]);
    const holder = await holdGroupLock(db.url, 'waited');
    const fetched = groups.fetch('waited', { memberId: 'm', max: 10 });
    await holder.waiters(1);
    const later = [await append(writer, 'S'), await append(writer, 'S')];
    await holder.client.query(
      `INSERT INTO consumer_group_deliveries (group_name, index, key, late)
       SELECT 'waited', i, NULL, false FROM unnest($1::bigint[]) AS i`,
      [later],
    );
    await holder.client.query(`UPDATE consumer_groups SET read_to = $1 WHERE name = 'waited'`, [
      later[1],
    ]);
    await holder.release();
    // Then the fetch hands them out with their messages (its statement did not see their rows)
    const events = (await fetched).events;
    expect(events.map((e) => e.index)).toEqual(later);
    expect(events.map((e) => (JSON.parse(e.json) as { id: number }).id)).toEqual(later);
  });

  it('reads the new source of a group deleted and defined again by another server (its read-on query is rebuilt)', async () => {
    // Given a group of A this process fetched from, deleted and defined again as a group of B
    // elsewhere (straight in the database: this process does not hear of it)
    const { groups, writer } = await start({ ordering: 'gapless' });
    await groups.define('again', { source: { types: ['A'] } });
    const a = await append(writer, 'A');
    expect((await groups.fetch('again', { memberId: 'm' })).events.map((e) => e.index)).toEqual([
      a,
    ]);
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(`DELETE FROM consumer_groups WHERE name = 'again'`);
    await admin.end();
    await groups.define('again', { source: { types: ['B'] }, from: a });
    const b = await append(writer, 'B');
    // When the member fetches, then it gets the B event
    const got = await groups.fetch('again', { memberId: 'm', waitMs: 2000 });
    expect(got.events.map((e) => e.index)).toEqual([b]);
  });

  it('deletes a group with its deliveries and batches, also those a fetch added while the delete waited for the group', async () => {
    // Given a group with three events in the log, and its row held by another transaction
    const { groups, writer } = await start({ ordering: 'gapless' });
    await groups.define('gone', { source: { types: ['G'] } });
    const ids = [await append(writer, 'G'), await append(writer, 'G'), await append(writer, 'G')];
    const holder = await holdGroupLock(db.url, 'gone');
    // When a fetch (which reads the three on and hands one out) and then the group's delete wait
    // on it, and it is released
    const fetched = groups.fetch('gone', { memberId: 'm', max: 1 });
    await holder.waiters(1);
    const removed = groups.remove('gone');
    await holder.waiters(2);
    await holder.release();
    expect((await fetched).events.map((e) => e.index)).toEqual([ids[0]]);
    await removed;
    // Then none of the group's deliveries is left (the delete saw those the fetch committed)
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const { rows } = await admin.query<{ rows: number; batches: number }>(
      `SELECT (SELECT count(*)::int FROM consumer_group_deliveries WHERE group_name = 'gone') AS rows,
              (SELECT count(*)::int FROM consumer_group_batches WHERE group_name = 'gone') AS batches`,
    );
    await admin.end();
    expect(rows[0]).toEqual({ rows: 0, batches: 0 });
  });

  it('answers an ack for a group that does not exist with ConsumerGroupNotFoundError', async () => {
    // Given no group named nope
    const { groups } = await start({ ordering: 'gapless' });
    // When a member acks in it, then it is told the group does not exist (not that its lease is lost)
    await expect(groups.ack('nope', 'm', 1, [1])).rejects.toBeInstanceOf(
      ConsumerGroupNotFoundError,
    );
  });

  it('never hands out or checkpoints past a hole the watermark holds; the held event comes in order once it commits', async () => {
    // Given a group of T events, one T delivered and acknowledged, then a held writer of a T and a T above its hole
    const { groups, writer } = await start({ gapTimeoutMs: 60_000, exactRelease: false });
    await groups.define('holes', { source: { types: ['T'] } });
    const first = await append(writer, 'T');
    const got = await groups.fetch('holes', { memberId: 'm', waitMs: 2000 });
    await groups.ack('holes', 'm', got.epoch, [first]);
    const held = await heldWriter(db.url, 'T');
    const above = await append(writer, 'T');
    // When the member fetches while the hole is held
    const during = await groups.fetch('holes', { memberId: 'm', waitMs: 300 });
    // Then nothing above the hole is handed out and the checkpoint stays below it
    expect(during.events).toEqual([]);
    expect((await groups.status('holes')).checkpoint).toBe(first);
    // When the held writer commits, the member gets the held event, then the one above, in order
    await held.commit();
    const after = await groups.fetch('holes', { memberId: 'm', waitMs: 5000, max: 10 });
    const rest = [...after.events];
    if (rest.length < 2)
      rest.push(...(await groups.fetch('holes', { memberId: 'm', waitMs: 5000 })).events);
    expect(rest.map((e) => [e.index, e.late])).toEqual([
      [held.position, false],
      [above, false],
    ]);
    const acked = await groups.ack('holes', 'm', after.epoch, [held.position, above]);
    expect(acked.checkpoint).toBe(above);
  });

  it('delivers a row that commits inside an abandoned hole the group passed, marked late, without moving the checkpoint back', async () => {
    // Given a group that passed an abandoned hole (gap timeout 200 ms) and acknowledged the T above it
    const { groups, writer } = await start({ gapTimeoutMs: 200, exactRelease: false });
    await groups.define('late', { source: { types: ['T'] } });
    const held = await heldWriter(db.url, 'T');
    const above = await append(writer, 'T');
    const first = await groups.fetch('late', { memberId: 'm', waitMs: 5000 });
    expect(first.events.map((e) => e.index)).toEqual([above]);
    const acked = await groups.ack('late', 'm', first.epoch, [above]);
    expect(acked.checkpoint).toBe(above);
    // When the held writer commits after all
    await held.commit();
    // Then the group delivers it, marked late
    const late = await groups.fetch('late', { memberId: 'm', waitMs: 5000 });
    expect(late.events.map((e) => [e.index, e.late, e.deliveryAttempt])).toEqual([
      [held.position, true, 1],
    ]);
    // And its ack leaves the checkpoint where it was (it had counted the hole as done)
    const done = await groups.ack('late', 'm', late.epoch, [held.position]);
    expect(done).toEqual({ done: [held.position], notHeld: [], checkpoint: above });
    expect((await groups.status('late')).inFlight).toBe(0);
  });

  it('reads, parks and lists across index 999 to 1000 in numeric order (a text sort put 1000 before 999)', async () => {
    // Given a group over 1,100 events that one member parks from 995 to 1004
    const { groups, writer } = await start({});
    await groups.define('wide', { source: { types: ['W'] }, maxInFlight: 2000 });
    const { entries } = await writer.append({
      messages: Array.from({ length: 1100 }, (_, n) => ({ messageType: 'W', body: { n } })),
    });
    const ids = entries.map((e) => (e.status === 'created' ? e.message.id : -1));
    const got = await groups.fetch('wide', { memberId: 'm', max: 2000 });
    // Then one fetch reads them all, in order
    expect(got.events.map((e) => e.index)).toEqual(ids);
    const parked = ids.filter((i) => i >= 995 && i <= 1004);
    await groups.nack('wide', 'm', got.epoch, parked, 'park', 'wide');
    const done = await groups.ack(
      'wide',
      'm',
      got.epoch,
      ids.filter((i) => !parked.includes(i)),
    );
    // And the checkpoint is the last event, and the parked list is in numeric order
    expect(done.checkpoint).toBe(ids.at(-1));
    expect((await groups.parked('wide', 100)).map((p) => p.index)).toEqual(parked);
  });

  it('counts a message hidden by a delete as done: never handed out with its body, and the checkpoint passes it (issue 24 meets 27)', async () => {
    // Given two T events of a stream that is then deleted, and a T outside any stream
    const { groups, writer } = await start({});
    const shelf = await writer.append({
      stream: { streamId: 'shelf-1', expectedVersion: 'no_stream' },
      messages: [
        { messageType: 'T', body: { secret: 1 } },
        { messageType: 'T', body: { secret: 2 } },
      ],
    });
    expect(shelf.entries.every((e) => e.status === 'created')).toBe(true);
    await writer.append({
      stream: { streamId: 'shelf-1', expectedVersion: 2 },
      delete: 'soft',
      skipDuplicateWindow: true,
      messages: [
        {
          messageType: '$stream-deleted',
          userId: 'system',
          body: { streamId: 'shelf-1', mode: 'soft', lastVersion: 2 },
        },
      ],
    });
    const visible = await append(writer, 'T');
    // When a group of T reads the log from the start
    await groups.define('hidden', { source: { types: ['T'] } });
    const got = await groups.fetch('hidden', { memberId: 'm', max: 10, waitMs: 2000 });
    // Then only the visible event is handed out, and acknowledging it moves the checkpoint past all
    expect(got.events.map((e) => e.index)).toEqual([visible]);
    expect(JSON.stringify(got.events)).not.toContain('secret');
    const done = await groups.ack('hidden', 'm', got.epoch, [visible]);
    expect(done.checkpoint).toBe(visible);
  });

  it('hands out as its tombstone an event whose stream was deleted while the fetch waited for the group', async () => {
    // Given a group that read two events of a stream ahead, one of them still ready
    const { groups, writer } = await start({ ordering: 'gapless' });
    await groups.define('shelved', { source: { types: ['T'] } });
    const shelf = await writer.append({
      stream: { streamId: 'shelf-2', expectedVersion: 'no_stream' },
      messages: [
        { messageType: 'T', body: { secret: 1 } },
        { messageType: 'T', body: { secret: 2 } },
      ],
    });
    const ids = shelf.entries.map((e) => (e.status === 'created' ? e.message.id : -1));
    const first = await groups.fetch('shelved', { memberId: 'm', max: 1, waitMs: 2000 });
    expect(first.events.map((e) => e.index)).toEqual([ids[0]]);
    // When a fetch waits for the group while the stream is deleted
    const holder = await holdGroupLock(db.url, 'shelved');
    const fetched = groups.fetch('shelved', { memberId: 'n', max: 1 });
    await holder.waiters(1);
    const deleted = await writer.append({
      stream: { streamId: 'shelf-2', expectedVersion: 2 },
      delete: 'soft',
      skipDuplicateWindow: true,
      messages: [
        {
          messageType: '$stream-deleted',
          userId: 'system',
          body: { streamId: 'shelf-2', mode: 'soft', lastVersion: 2 },
        },
      ],
    });
    expect(deleted.entries[0].status).toBe('created');
    await holder.release();
    // Then the ready event goes out as its tombstone, never with its body
    const got = await fetched;
    expect(got.events.map((e) => e.index)).toEqual([ids[1]]);
    expect(got.events[0].json).not.toContain('secret');
    expect(JSON.parse(got.events[0].json)).toHaveProperty('tombstone');
  });

  it('moves the checkpoint to the end when two acks wait on the group together (neither counts the other’s events as not done)', async () => {
    // Given two members each holding half of four events
    const { groups, writer } = await start({});
    await groups.define('pair', { source: { types: ['P'] } });
    const ids = [await append(writer, 'P'), await append(writer, 'P')];
    ids.push(await append(writer, 'P'), await append(writer, 'P'));
    const a = await groups.fetch('pair', { memberId: 'a', max: 2, waitMs: 2000 });
    const b = await groups.fetch('pair', { memberId: 'b', max: 2, waitMs: 2000 });
    expect([...a.events, ...b.events].map((e) => e.index).sort((x, y) => x - y)).toEqual(ids);
    // When both ack while another transaction holds the group, so that each ack's statement
    // begins before the other's commits, the one holding the later events first
    const [low, high] = a.events[0].index < b.events[0].index ? [a, b] : [b, a];
    const holder = await holdGroupLock(db.url, 'pair');
    const ackHigh = groups.ack(
      'pair',
      high.memberId,
      high.epoch,
      high.events.map((e) => e.index),
    );
    await holder.waiters(1);
    const ackLow = groups.ack(
      'pair',
      low.memberId,
      low.epoch,
      low.events.map((e) => e.index),
    );
    await holder.waiters(2);
    await holder.release();
    const [ackA, ackB] = await Promise.all([ackHigh, ackLow]);
    // Then every event is done and the checkpoint is the last one
    expect([ackA.notHeld, ackB.notHeld]).toEqual([[], []]);
    const status = await groups.status('pair');
    expect([status.inFlight, status.ready, status.checkpoint]).toEqual([0, 0, ids.at(-1)]);
  });

  it('never moves the checkpoint past events read on while its ack waited on the group', async () => {
    // Given a member holding the group's only event
    const { groups, writer } = await start({});
    await groups.define('ahead', { source: { types: ['A'] } });
    const first = await append(writer, 'A');
    const got = await groups.fetch('ahead', { memberId: 'm', waitMs: 2000 });
    expect(got.events.map((e) => e.index)).toEqual([first]);
    // When another server's fetch reads two more events on while the group is held, and the
    // member's ack waits behind that fetch
    const holder = await holdGroupLock(db.url, 'ahead');
    const more = [await append(writer, 'A'), await append(writer, 'A')];
    const other = await startProjectionsApp(db.url, {
      log: { ordering: 'concurrent' },
      subscriptions: { groupPollMs: 20 },
    });
    apps.push(other);
    const fetched = other
      .get(ConsumerGroupsService)
      .fetch('ahead', { memberId: 'n', max: 1, waitMs: 5000 });
    await holder.waiters(1);
    const acked = groups.ack('ahead', 'm', got.epoch, [first]);
    await holder.waiters(2);
    await holder.release();
    // Then the ack moves the checkpoint only up to its own event, and the fetch gets the next one
    expect((await acked).checkpoint).toBe(first);
    expect((await fetched).events.map((e) => e.index)).toEqual([more[0]]);
    const status = await groups.status('ahead');
    expect([status.checkpoint, status.inFlight, status.ready]).toEqual([first, 1, 1]);
  });

  it('gives a member that comes back after its lease ended what it held under the old epoch again, as its next delivery', async () => {
    // Given a member whose lease ends 100 ms after its last call, holding an event (ack timeout a minute)
    const app = await startProjectionsApp(db.url, {
      log: { ordering: 'gapless' },
      subscriptions: { groupMemberTimeoutMs: 100, groupPollMs: 20 },
    });
    apps.push(app);
    const groups = app.get(ConsumerGroupsService);
    const writer = app.get(LogWriter);
    await groups.define('back', { source: { types: ['K'] }, ackTimeoutMs: 60_000 });
    const first = await append(writer, 'K');
    const held = await groups.fetch('back', { memberId: 'm' });
    expect([held.epoch, held.events.map((e) => e.index)]).toEqual([1, [first]]);
    await waitUntil(async () => {
      const member = (await groups.status('back')).members.find((m) => m.memberId === 'm');
      return member !== undefined && !member.alive;
    }, 'the member to be declared dead');
    // When it fetches again before any other member does
    const again = await groups.fetch('back', { memberId: 'm' });
    // Then it has a new epoch and gets the event once more (its second delivery), not nothing
    expect(again.epoch).toBe(2);
    expect(again.events.map((e) => [e.index, e.deliveryAttempt])).toEqual([[first, 2]]);
  });

  it('gives what a live member held past its ack timeout to the next fetch, its second delivery; the member keeps its epoch', async () => {
    // Given a member holding an event with an ack timeout of 100 ms, its lease long
    const app = await startProjectionsApp(db.url, { log: { ordering: 'gapless' } });
    apps.push(app);
    const groups = app.get(ConsumerGroupsService);
    const writer = app.get(LogWriter);
    await groups.define('slow', { source: { types: ['L'] }, ackTimeoutMs: 100 });
    const first = await append(writer, 'L');
    const held = await groups.fetch('slow', { memberId: 'a' });
    expect(held.events.map((e) => [e.index, e.deliveryAttempt])).toEqual([[first, 1]]);
    // When another member fetches after the timeout passed
    await new Promise((resolve) => setTimeout(resolve, 250));
    const other = await groups.fetch('slow', { memberId: 'b' });
    // Then it gets the event (its second delivery), and the first member is still alive in its epoch
    expect(other.events.map((e) => [e.index, e.deliveryAttempt])).toEqual([[first, 2]]);
    const member = (await groups.status('slow')).members.find((m) => m.memberId === 'a');
    expect([member?.alive, member?.epoch]).toEqual([true, held.epoch]);
  });

  it('reads several types in index order, each once: a type listed twice, and more types than a read merges', async () => {
    // Given a group of two types (one listed twice) and one of nine, over events of both and others
    const app = await startProjectionsApp(db.url, { log: { ordering: 'gapless' } });
    apps.push(app);
    const groups = app.get(ConsumerGroupsService);
    const writer = app.get(LogWriter);
    const others = ['N1', 'N2', 'N3', 'N4', 'N5', 'N6', 'N7'];
    await groups.define('two', { source: { types: ['X', 'Y', 'X'] } });
    await groups.define('nine', { source: { types: ['Y', ...others, 'X'] } });
    const wanted: number[] = [];
    for (const type of ['X', 'Q', 'Y', 'X', 'Q', 'Y', 'Y', 'X']) {
      const index = await append(writer, type);
      if (type !== 'Q') wanted.push(index);
    }
    // When each fetches more than there is
    const two = await groups.fetch('two', { memberId: 'm', max: 20 });
    const nine = await groups.fetch('nine', { memberId: 'm', max: 20 });
    // Then each gets every event of its types once, in index order
    expect(two.events.map((e) => e.index)).toEqual(wanted);
    expect(nine.events.map((e) => e.index)).toEqual(wanted);
  });

  it('hands out what a read-on finds as the claim would pick it: pinned, never a key whose earlier event is held, nor a key twice', async () => {
    // Given a pinned_by_key group where member m1 holds key A's first event
    const app = await startProjectionsApp(db.url, {
      log: { ordering: 'gapless' },
      subscriptions: { groupPollMs: 20 },
    });
    apps.push(app);
    const groups = app.get(ConsumerGroupsService);
    const writer = app.get(LogWriter);
    const publish = async (k: string) => {
      const [entry] = (await writer.append({ messages: [{ messageType: 'P', body: { k } }] }))
        .entries;
      if (entry.status !== 'created') throw new Error('not stored');
      return entry.message.id;
    };
    await groups.define('pins', {
      source: { types: ['P'] },
      strategy: 'pinned_by_key',
      keyPath: 'body.k',
      ackTimeoutMs: 60_000,
    });
    const a1 = await publish('A');
    const held = await groups.fetch('pins', { memberId: 'm1' });
    expect(held.events.map((e) => e.index)).toEqual([a1]);
    // When A's second event, B's two and C's first are read on by another member's fetch
    const a2 = await publish('A');
    const b1 = await publish('B');
    const b2 = await publish('B');
    const c1 = await publish('C');
    const other = await groups.fetch('pins', { memberId: 'm2', max: 10 });
    // Then it gets the first of each key with nothing held (B's first, C's), in one statement's read
    expect(other.events.map((e) => [e.index, e.deliveryAttempt])).toEqual([
      [b1, 1],
      [c1, 1],
    ]);
    // And each key's next event comes once the one before it is acknowledged
    await groups.ack('pins', 'm1', held.epoch, [a1]);
    await groups.ack('pins', 'm2', other.epoch, [b1]);
    const next = await groups.fetch('pins', { memberId: 'm1', max: 10 });
    expect(next.events.map((e) => e.index)).toEqual([a2, b2]);
  });

  it('removes a member dead for longer than the retention; its id comes back above every epoch it had, so its old one stays refused', async () => {
    // Given members whose lease ends 100 ms after their last call, removed 100 ms after that
    const app = await startProjectionsApp(db.url, {
      log: { ordering: 'gapless' },
      subscriptions: { groupMemberTimeoutMs: 100, groupMemberRetentionMs: 100, groupPollMs: 20 },
    });
    apps.push(app);
    const groups = app.get(ConsumerGroupsService);
    const writer = app.get(LogWriter);
    await groups.define('brief', { source: { types: ['B'] }, ackTimeoutMs: 60_000 });
    const first = await append(writer, 'B');
    // And a member that fetched an event, went silent and came back twice (epochs 1, 2, 3)
    const gone = await groups.fetch('brief', { memberId: 'gone' });
    expect([gone.epoch, gone.events.map((e) => e.index)]).toEqual([1, [first]]);
    let last = gone;
    for (const epoch of [2, 3]) {
      await waitUntil(async () => {
        const member = (await groups.status('brief')).members.find((m) => m.memberId === 'gone');
        return member !== undefined && !member.alive;
      }, 'the member to be declared dead');
      last = await groups.fetch('brief', { memberId: 'gone' });
      expect(last.epoch).toBe(epoch);
    }
    // When it stays silent past the retention while another member fetches
    await waitUntil(async () => {
      await groups.fetch('brief', { memberId: 'other' });
      return !(await groups.status('brief')).members.some((m) => m.memberId === 'gone');
    }, 'the dead member to be removed');
    // Then its ack under its last epoch is refused, and it comes back above that epoch
    await expect(groups.ack('brief', 'gone', last.epoch, [first])).rejects.toBeInstanceOf(
      MemberLeaseLostError,
    );
    const back = await groups.fetch('brief', { memberId: 'gone' });
    expect(back.epoch).toBe(4);
    // And a member new to the group starts above it too (epochs are never given twice)
    const fresh = await groups.fetch('brief', { memberId: 'fresh' });
    expect(fresh.epoch).toBeGreaterThan(3);
  });

  /** The held rows and batches of a group, straight from its tables. */
  const heldShape = async (group: string) => {
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ rows: number; batches: number[][] }>(
        `SELECT (SELECT count(*)::int FROM consumer_group_deliveries WHERE group_name = $1 AND member_id IS NOT NULL) AS rows,
                (SELECT coalesce(json_agg(b.indices ORDER BY b.first_index), '[]') FROM consumer_group_batches b WHERE b.group_name = $1) AS batches`,
        [group],
      );
      return rows[0];
    } finally {
      await admin.end();
    }
  };

  it('keeps what a round_robin read-on hands out as one batch: a partial ack leaves the rest in flight and the checkpoint below it; the last ack removes it', async () => {
    // Given a round_robin group and five events, all handed to one member by one fetch
    const app = await startProjectionsApp(db.url, { log: { ordering: 'gapless' } });
    apps.push(app);
    const groups = app.get(ConsumerGroupsService);
    const writer = app.get(LogWriter);
    await groups.define('batch', { source: { types: ['R'] } });
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await append(writer, 'R'));
    const got = await groups.fetch('batch', { memberId: 'm', max: 5 });
    expect(got.events.map((e) => [e.index, e.deliveryAttempt])).toEqual(ids.map((i) => [i, 1]));
    // Then they are one batch, no held row
    expect(await heldShape('batch')).toEqual({ rows: 0, batches: [ids] });
    // When the member acknowledges the first, second and fourth (and one it never held)
    const first = await groups.ack('batch', 'm', got.epoch, [ids[3], ids[0], ids[1], 999_999]);
    // Then those are done, the checkpoint stops below the third, and two are still in flight
    expect(first).toEqual({
      done: [ids[0], ids[1], ids[3]],
      notHeld: [999_999],
      checkpoint: ids[1],
    });
    expect(await heldShape('batch')).toEqual({ rows: 0, batches: [[ids[2], ids[4]]] });
    const status = await groups.status('batch');
    expect([status.inFlight, status.members.map((m) => m.inFlight)]).toEqual([2, [2]]);
    // And the last ack takes the batch away and moves the checkpoint to the end
    const last = await groups.ack('batch', 'm', got.epoch, [ids[4], ids[2]]);
    expect(last).toEqual({ done: [ids[2], ids[4]], notHeld: [], checkpoint: ids[4] });
    expect(await heldShape('batch')).toEqual({ rows: 0, batches: [] });
    expect((await groups.status('batch')).inFlight).toBe(0);
  });

  it('nacks one event of a batch: it goes to the next fetch as its second delivery, the others stay held and are acknowledged', async () => {
    // Given three events handed to member a as one batch
    const app = await startProjectionsApp(db.url, { log: { ordering: 'gapless' } });
    apps.push(app);
    const groups = app.get(ConsumerGroupsService);
    const writer = app.get(LogWriter);
    await groups.define('retry', { source: { types: ['N'] } });
    const ids = [await append(writer, 'N'), await append(writer, 'N'), await append(writer, 'N')];
    const a = await groups.fetch('retry', { memberId: 'a', max: 10 });
    expect(a.events.map((e) => e.index)).toEqual(ids);
    // When a nacks the second for a retry
    const nacked = await groups.nack('retry', 'a', a.epoch, [ids[1]], 'retry', 'boom');
    expect([nacked.done, nacked.checkpoint]).toEqual([[ids[1]], ids[0] - 1]);
    // Then member b gets it as its second delivery, and a still holds the other two
    const b = await groups.fetch('retry', { memberId: 'b', max: 10 });
    expect(b.events.map((e) => [e.index, e.deliveryAttempt])).toEqual([[ids[1], 2]]);
    const members = (await groups.status('retry')).members;
    expect(members.map((m) => [m.memberId, m.inFlight])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    // And once both acknowledge, every event is done once and the checkpoint is at the end
    expect((await groups.ack('retry', 'a', a.epoch, ids)).done).toEqual([ids[0], ids[2]]);
    const end = await groups.ack('retry', 'b', b.epoch, [ids[1]]);
    expect([end.done, end.checkpoint]).toEqual([[ids[1]], ids[2]]);
    expect(await heldShape('retry')).toEqual({ rows: 0, batches: [] });
  });

  it('counts what a member holds in batches against maxInFlight', async () => {
    // Given a group that lets a member hold 3, and five events
    const app = await startProjectionsApp(db.url, { log: { ordering: 'gapless' } });
    apps.push(app);
    const groups = app.get(ConsumerGroupsService);
    const writer = app.get(LogWriter);
    await groups.define('room', { source: { types: ['Q'] }, maxInFlight: 3 });
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await append(writer, 'Q'));
    // When the member fetches 10, then 10 more
    const first = await groups.fetch('room', { memberId: 'm', max: 10 });
    const none = await groups.fetch('room', { memberId: 'm', max: 10 });
    // Then it got three, then none; after acking one, exactly one more
    expect(first.events.map((e) => e.index)).toEqual(ids.slice(0, 3));
    expect(none.events).toEqual([]);
    await groups.ack('room', 'm', first.epoch, [ids[1]]);
    const one = await groups.fetch('room', { memberId: 'm', max: 10 });
    expect(one.events.map((e) => e.index)).toEqual([ids[3]]);
  });
});

/** Polls `done` until it holds (a lease deadline passes on the clock, not on an event). */
async function waitUntil(done: () => Promise<boolean>, what: string): Promise<void> {
  for (const until = Date.now() + 10_000; Date.now() < until;) if (await done()) return;
  throw new Error(`Timed out waiting for ${what}`);
}
