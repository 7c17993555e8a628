import type { INestApplicationContext } from '@nestjs/common';
import { LogWriter } from '@ordinal/log';
import { ConsumerOwnership } from '@ordinal/ownership';
import { SubscriptionsService } from '@ordinal/subscriptions';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { ProjectionVersionConflictError } from '../errors/index.js';
import { ProjectionsService } from '../projections.service.js';
import { buildSchema } from './version-names.js';
import {
  Tally,
  TALLY_DDL,
  TallyV1,
  Solo,
  SOLO_DDL,
  SoloV1,
  SoloV2,
  TallyV2,
  VersionProbe,
  Pair,
  PAIR_DDL,
  PairV1,
} from './versioned-projections.fixture.js';

/** Appends `count` Solo events from a process without the projection. */
async function write2(url: string, count: number): Promise<number[]> {
  const app = await startProjectionsApp(url, {});
  try {
    const result = await app.get(LogWriter).append({
      messages: Array.from({ length: count }, () => ({ messageType: 'Solo', body: {} })),
      skipDuplicateWindow: true,
    });
    return result.entries.map((e) => (e.status === 'created' ? e.message.id : -1));
  } finally {
    await app.close();
  }
}

describe('Versioned projections: candidate, promotion, rollback, retire (one database, v1 and v2 apps)', () => {
  let db: TestDatabase;
  let v1: INestApplicationContext;
  let v2: INestApplicationContext;
  const ids = ['a', 'b', 'c'];
  let appended = 0;

  const append = async (count: number): Promise<number> => {
    const messages = Array.from({ length: count }, (_, i) => ({
      messageType: 'Counted',
      body: { id: ids[(appended + i) % ids.length] },
    }));
    appended += count;
    const result = await v1.get(LogWriter).append({ messages, skipDuplicateWindow: true });
    const last = result.entries.at(-1)!;
    return last.status === 'created' ? last.message.id : -1;
  };
  const read = () => db.query<{ id: string; n: number }>('SELECT id, n FROM bg_tally ORDER BY id');
  /** What a from-scratch build gives: each event counts `weight`. */
  const expected = (weight: number) =>
    ids
      .map((id, k) => ({
        id,
        n:
          weight *
          Array.from({ length: appended }, (_, i) => i % ids.length).filter((x) => x === k).length,
      }))
      .filter((r) => r.n > 0);
  const schemaOf = (version: number) => buildSchema({ projection: 'bg-tally', version, build: 1 });
  const versions = () => v1.get(ProjectionsService).listVersions('bg-tally');
  const schemas = async () =>
    (
      await db.query<{ nspname: string }>(
        "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bg\\_tally%' ORDER BY nspname",
      )
    ).map((r) => r.nspname);

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.query(TALLY_DDL);
    await db.query(SOLO_DDL);
    v1 = await startProjectionsApp(db.url, {
      providers: [VersionProbe, TallyV1],
      subscriptions: { idlePollMs: 50 },
      entities: [Tally],
    });
    const last = await append(6);
    await v1.get(ProjectionsService).waitFor('bg-tally', last, 10_000);
  });
  afterAll(async () => {
    await v2?.close();
    await v1?.close();
    await db.drop();
  });

  it('runs a new version as a candidate beside the serving one, then exactly one of two racing promotions wins', async () => {
    // Given v1 serving and a process with v2 code starting beside it
    v2 = await startProjectionsApp(db.url, {
      providers: [VersionProbe, TallyV2],
      subscriptions: { idlePollMs: 50 },
      entities: [Tally],
    });
    const last = await append(6);
    // When the candidate has caught up with v1
    await waitFor(
      async () =>
        (await versions()).find(
          (v) => v.version === 2 && v.state === 'candidate' && v.position >= last,
        ),
      15_000,
      'v2 candidate caught up',
    );
    // Then readers still get v1's full model, and the candidate held every side effect back
    expect(await read()).toEqual(expected(1));
    expect(v2.get(VersionProbe).live(2)).toEqual([]);
    expect(v1.get(VersionProbe).live(1).length).toBe(appended);
    // When two promotions race
    const results = await Promise.allSettled([
      v1.get(ProjectionsService).promote('bg-tally', 2),
      v2.get(ProjectionsService).promote('bg-tally', 2),
    ]);
    // Then exactly one wins, the other is told why
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(ProjectionVersionConflictError);
    // And readers get v2's model through the view, equal to a from-scratch v2 build
    expect(await read()).toEqual(expected(10));
    const [{ relkind }] = await db.query<{ relkind: string }>(
      "SELECT relkind FROM pg_class WHERE relname = 'bg_tally' AND relnamespace = 'public'::regnamespace",
    );
    expect(relkind).toBe('v');
    expect((await versions()).map((v) => [v.version, v.state])).toEqual([
      [1, 'previous'],
      [2, 'serving'],
    ]);
  });

  it('after the switch v2 runs the side effects and v1 none: every event exactly once; waitFor answers for v2', async () => {
    // When events arrive after the promotion
    const last = await append(3);
    const projections = v1.get(ProjectionsService);
    await projections.waitFor('bg-tally', last, 10_000);
    // Then the serving version (v2) applied them, live
    expect(await read()).toEqual(expected(10).map((r) => r));
    const liveIndexes = [...v1.get(VersionProbe).live(1), ...v2.get(VersionProbe).live(2)].sort(
      (a, b) => a - b,
    );
    expect(new Set(liveIndexes).size).toBe(liveIndexes.length);
    expect(liveIndexes.length).toBe(appended);
    const answer = await projections.read(
      'bg-tally',
      (m) => m.query('SELECT count(*)::int AS n FROM bg_tally'),
      {
        atLeast: last,
      },
    );
    expect(answer).toMatchObject({ version: 2, build: 1 });
    expect(answer.position).toBeGreaterThanOrEqual(last);
  });

  it('rolls back to v1 (which catches up, replaying what v2 already did), then promotes v2 again', async () => {
    const projections = v1.get(ProjectionsService);
    // When rolled back
    await projections.rollback('bg-tally');
    const last = await append(3);
    await projections.waitFor('bg-tally', last, 10_000);
    // Then readers get v1's model, complete
    expect(await read()).toEqual(expected(1));
    // And a second rollback has nothing... but v2 is previous, so it goes back to v2: promote instead
    await projections.promote('bg-tally', 2);
    await projections.waitFor('bg-tally', last, 10_000);
    expect(await read()).toEqual(expected(10));
    const liveIndexes = [...v1.get(VersionProbe).live(1), ...v2.get(VersionProbe).live(2)];
    expect(new Set(liveIndexes).size).toBe(appended);
    expect(liveIndexes.length).toBe(appended);
  });

  it('retire drops exactly the old version’s tables, and refuses the serving one', async () => {
    // Given both versions' schemas
    expect(await schemas()).toEqual([schemaOf(1), schemaOf(2)]);
    const projections = v1.get(ProjectionsService);
    // When v2 (serving) is to be retired, it is refused; v1 is retired
    await expect(projections.retire('bg-tally', 2)).rejects.toBeInstanceOf(
      ProjectionVersionConflictError,
    );
    expect(await projections.retire('bg-tally', 1)).toEqual([schemaOf(1)]);
    // And retiring it again drops nothing and is not an error (the versions report still lists it)
    expect(await projections.retire('bg-tally', 1)).toEqual([]);
    // Then only v1's schema is gone; readers still get v2
    expect(await schemas()).toEqual([schemaOf(2)]);
    expect(await read()).toEqual(expected(10));
    expect((await versions()).map((v) => [v.version, v.state])).toEqual([
      [1, 'retired'],
      [2, 'serving'],
    ]);
    await expect(projections.rollback('bg-tally')).rejects.toBeInstanceOf(
      ProjectionVersionConflictError,
    );
  });

  it('rebuild is blue/green by default (readers keep the full model), in place on request', async () => {
    const projections = v1.get(ProjectionsService);
    // Given v2's build promoted again just now (the v2 process left it at the rollback, when it
    // became previous, and joins it again at its next check: until then it has no owner)
    // When v2 is rebuilt at once (asked in the v1 process: the v2 process that owns it runs it,
    // once it has joined the build again: the command waits for an owner up to the takeover bound)
    await projections.rebuild('bg-tally');
    const build2 = await waitFor(
      async () => (await versions()).find((v) => v.version === 2 && v.build === 2),
      10_000,
      'the new build',
    );
    expect(build2.state).toBe('candidate');
    // Then readers get the full v2 model all along, until the new build is promoted
    let reads = 0;
    await waitFor(
      async () => {
        expect(await read()).toEqual(expected(10));
        reads += 1;
        const now = (await versions()).find((v) => v.version === 2 && v.build === 2)!;
        return now.state === 'candidate' && now.lag === 0 && now.running;
      },
      15_000,
      'the rebuild caught up',
    );
    await projections.promote('bg-tally', 2);
    expect(reads).toBeGreaterThan(0);
    expect(await read()).toEqual(expected(10));
    expect((await versions()).map((v) => [v.version, v.build, v.state])).toEqual([
      [1, 1, 'retired'],
      [2, 1, 'previous'],
      [2, 2, 'serving'],
    ]);
    // And retiring v2 drops its previous build only
    expect(await projections.retire('bg-tally', 2)).toEqual([schemaOf(2)]);
    expect(await schemas()).toEqual([
      buildSchema({ projection: 'bg-tally', version: 2, build: 2 }),
    ]);
    // When rebuilt in place, it is cleared and replayed into the same tables
    const last = await append(1);
    await projections.waitFor('bg-tally', last, 10_000);
    const liveBefore = v2.get(VersionProbe).live(2).length;
    await projections.rebuild('bg-tally', { mode: 'in-place' });
    await waitFor(
      async () => JSON.stringify(await read()) === JSON.stringify(expected(10)),
      15_000,
      'the in-place replay',
    );
    expect(await projections.waitFor('bg-tally', last, 10_000)).toBeGreaterThanOrEqual(last);
    // And the replay held its side effects (its boundary is the head at the rebuild, not the promotion's hand-over)
    expect(v2.get(VersionProbe).live(2).length).toBe(liveBefore);
    expect((await versions()).filter((v) => v.state !== 'retired')).toHaveLength(1);
  });

  it('a deploy that replaces every process: v1 stops where it is, the candidate runs the side effects above it and is promoted by itself', async () => {
    // Given v1 of another projection, run by a process that then goes (with the events it applied)
    let solo = await startProjectionsApp(db.url, {
      providers: [VersionProbe, SoloV1],
      // (its data source does not list the read model's entity: the table name comes from @Entity)
      entities: [],
    });
    const write = async (count: number) => {
      const result = await solo.get(LogWriter).append({
        messages: Array.from({ length: count }, () => ({ messageType: 'Solo', body: {} })),
        skipDuplicateWindow: true,
      });
      return result.entries.map((e) => (e.status === 'created' ? e.message.id : -1));
    };
    const first = await write(4);
    await solo.get(ProjectionsService).waitFor('bg-solo', first.at(-1)!, 10_000);
    const v1Live = solo.get(VersionProbe).live(1);
    await solo.close();
    // When events arrive while no process runs it, and a process with v2 code starts
    const whileDown = await write2(db.url, 3);
    solo = await startProjectionsApp(db.url, {
      providers: [VersionProbe, SoloV2],
      entities: [Solo],
    });
    try {
      // Then v2 is promoted by itself once caught up
      await waitFor(
        async () =>
          (await solo.get(ProjectionsService).listVersions('bg-solo')).find(
            (v) => v.version === 2 && v.state === 'serving',
          ),
        15_000,
        'v2 promoted',
      );
      const after = await write(2);
      await solo.get(ProjectionsService).waitFor('bg-solo', after.at(-1)!, 10_000);
      // And every side effect ran once: v1's before it went, v2's above v1's stop
      expect(v1Live).toEqual(first);
      expect(solo.get(VersionProbe).live(2)).toEqual([...whileDown, ...after]);
      // And readers get v2's model, whole
      const rows = await db.query<{ index: string; version: number }>(
        'SELECT index, version FROM bg_solo ORDER BY index',
      );
      expect(rows.map((r) => [Number(r.index), r.version])).toEqual(
        [...first, ...whileDown, ...after].map((i) => [i, 2]),
      );
    } finally {
      await solo.close();
    }
  });
  it('a blue/green rebuild started in one replica is shared by the others and finished by them when it goes', async () => {
    // Given two replicas with the same projection (two partitions), caught up
    await db.query(PAIR_DDL);
    const replica = () =>
      startProjectionsApp(db.url, {
        providers: [PairV1],
        log: { takeoverMs: 1000 },
        subscriptions: { idlePollMs: 50 },
        entities: [Pair],
      });
    const a = await replica();
    const b = await replica();
    let aGone = false;
    try {
      const keys = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8'];
      let sent = 0;
      const pair = async (count: number) => {
        const result = await b.get(LogWriter).append({
          messages: Array.from({ length: count }, (_, i) => ({
            messageType: 'Paired',
            body: { id: keys[(sent + i) % keys.length] },
          })),
          skipDuplicateWindow: true,
        });
        sent += count;
        const last = result.entries.at(-1)!;
        return last.status === 'created' ? last.message.id : -1;
      };
      let last = await pair(40);
      await a.get(ProjectionsService).waitFor('bg-pair', last, 10_000);
      const owners = async (group: string) =>
        (
          await db.query<{ name: string; owner: string }>(
            `SELECT name, owner FROM consumer_leases
              WHERE group_name = $1 AND owner IS NOT NULL AND expires_at > clock_timestamp() ORDER BY name`,
            [group],
          )
        ).map((r) => r.owner);
      const [ownerA, ownerB] = [a.get(ConsumerOwnership).owner, b.get(ConsumerOwnership).owner];
      // When a blue/green rebuild starts in replica a
      await a.get(ProjectionsService).rebuild('bg-pair');
      // Then replica b runs the new build too: one partition each, one owner per partition
      const shared = await waitFor(
        async () => {
          const now = await owners('bg-pair@v1.2');
          return now.length === 2 && new Set(now).size === 2 ? now : null;
        },
        10_000,
        'the new build shared by both replicas',
      );
      expect([...shared].sort()).toEqual([ownerA, ownerB].sort());
      // When replica a goes, and events keep coming
      await a.close();
      aGone = true;
      last = await pair(8);
      // Then replica b runs all of the new build and catches it up
      const versions = () => b.get(ProjectionsService).listVersions('bg-pair');
      await waitFor(
        async () =>
          (await versions()).find(
            (v) => v.build === 2 && v.state === 'candidate' && v.position >= last && v.lag === 0,
          ),
        10_000,
        'the new build caught up in replica b',
      );
      expect(await owners('bg-pair@v1.2')).toEqual([ownerB, ownerB]);
      // And once promoted, readers get what a from-scratch build gives
      await b.get(ProjectionsService).promote('bg-pair', 1);
      const rows = await db.query<{ id: string; n: number }>(
        'SELECT id, n FROM bg_pair ORDER BY id',
      );
      expect(rows).toEqual(keys.map((id) => ({ id, n: sent / keys.length })));
      // And the superseded build, at its stop, runs nowhere any more
      await waitFor(
        () => !b.get(SubscriptionsService).names().includes('bg-pair'),
        5_000,
        'the previous build unsubscribed',
      );
      expect(b.get(SubscriptionsService).names()).toContain('bg-pair@v1.2');
      // (unsubscribe forgets the name at once, then gives its leases back: wait for those)
      await waitFor(
        async () => (await owners('bg-pair')).length === 0,
        5_000,
        'the previous build’s leases given back',
      );
      expect(await owners('bg-pair')).toEqual([]);
    } finally {
      await b.close();
      if (!aGone) await a.close();
    }
  });
});
