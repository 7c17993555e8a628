import type { INestApplicationContext } from '@nestjs/common';
import { EventBus } from '@nestjs/cqrs';
import {
  StreamDeletedError,
  StreamTombstonedError,
  VersionConflictError,
  currentCorrelation,
  runWithCorrelation,
  type CorrelationContext,
} from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startEventStoreContext } from '@ordinal/test-support/event-store-context';
import { Aggregate } from './aggregate.decorator.js';
import { AggregateRoot } from './aggregate-root.js';
import type { AggregateRepository } from './aggregate-repository.js';
import { aggregateRepositoryToken } from './aggregate-repository.token.js';
import { DomainEvent } from '../events/domain-event.decorator.js';

@DomainEvent('TallyOpened')
class TallyOpened {
  constructor(readonly owner: string) {}
}

@DomainEvent('TallyAdded')
class TallyAdded {
  constructor(
    readonly value: number,
    readonly writer: string,
  ) {}
}

@Aggregate({ events: [TallyOpened, TallyAdded] })
class Tally extends AggregateRoot {
  owner = '';
  values: number[] = [];

  open(owner: string): void {
    this.apply(new TallyOpened(owner));
  }

  add(value: number, writer = 'w'): void {
    this.apply(new TallyAdded(value, writer));
  }

  onTallyOpened(event: TallyOpened): void {
    this.owner = event.owner;
  }

  onTallyAdded(event: TallyAdded): void {
    this.values.push(event.value);
  }
}

// Both orderings: each has its own append path for a stream with an expected version (one
// statement that falls back to a transaction), and the conflicts must hold across processes in each.
describe.each(['gapless', 'concurrent'] as const)(
  'AggregateRepository on the log (A1, A2), %s mode',
  (ordering) => {
    let db: TestDatabase;
    let app: INestApplicationContext;
    let other: INestApplicationContext;
    let tallies: AggregateRepository<Tally>;
    let otherTallies: AggregateRepository<Tally>;

    beforeAll(async () => {
      db = await createTestDatabase();
      app = await startEventStoreContext(db.url, { aggregates: [Tally], log: { ordering } });
      // A second application instance on the same database: conflicts must hold across processes' writers.
      other = await startEventStoreContext(db.url, { aggregates: [Tally], log: { ordering } });
      tallies = app.get(aggregateRepositoryToken(Tally));
      otherTallies = other.get(aggregateRepositoryToken(Tally));
    });
    afterAll(async () => {
      await other?.close();
      await app?.close();
      await db?.drop();
    });

    const rows = (streamId: string) =>
      db.query<{
        stream_version: string;
        message_type: string;
        body: { writer?: string; value?: number };
      }>(
        'SELECT stream_version, message_type, body FROM messages WHERE stream_id = $1 ORDER BY stream_version',
        [streamId],
      );

    it('saves a new aggregate at version 1 with a global index, category from the stream id', async () => {
      // Given a new aggregate with one event
      const tally = tallies.create('tally-new');
      tally.open('ann');
      // When it is saved
      const saved = await tallies.save(tally);
      // Then it is version 1 of its stream, an ordinary log message with an index
      expect(saved).toMatchObject({ streamId: 'tally-new', version: 1 });
      expect(tally.version).toBe(1);
      expect(tally.getUncommittedEvents()).toHaveLength(0);
      const [row] = await db.query<{ index: string; category: string; schema_version: number }>(
        'SELECT index, category, schema_version FROM messages WHERE stream_id = $1',
        ['tally-new'],
      );
      expect(Number(row.index)).toBe(saved!.firstIndex);
      expect(row.category).toBe('tally');
      const loaded = await tallies.load('tally-new');
      expect(loaded).toMatchObject({ owner: 'ann', version: 1 });
    });

    it('lets exactly one of 20 concurrent saves with the same expected version win', async () => {
      // Given a stream at version 1 and 20 copies loaded at that version, 10 in each application instance
      const opened = tallies.create('tally-race');
      opened.open('ann');
      await tallies.save(opened);
      const copies = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? tallies : otherTallies).load('tally-race'),
        ),
      );
      copies.forEach((copy, i) => copy.add(i, `writer-${i}`));
      // When all 20 save at once
      const outcomes = await Promise.allSettled(
        copies.map((copy, i) => (i % 2 === 0 ? tallies : otherTallies).save(copy)),
      );
      // Then exactly one succeeds and 19 get VersionConflictError {streamId, current: 2, expected: 1}
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(19);
      for (const { reason } of lost) {
        expect(reason).toBeInstanceOf(VersionConflictError);
        expect(reason).toMatchObject({ streamId: 'tally-race', current: 2, expected: 1 });
      }
      // And the stream holds exactly one new event, the winner's
      const stored = await rows('tally-race');
      expect(stored.map((r) => Number(r.stream_version))).toEqual([1, 2]);
      const winner = copies.findIndex((_, i) => outcomes[i].status === 'fulfilled');
      expect(stored[1].body.writer).toBe(`writer-${winner}`);
      const [head] = await db.query<{ version: string }>(
        'SELECT version FROM streams WHERE stream_id = $1',
        ['tally-race'],
      );
      expect(Number(head.version)).toBe(2);
    });

    it('applies 10 concurrent retried commands on one aggregate exactly once each', async () => {
      // Given one aggregate
      const opened = tallies.create('tally-retry');
      opened.open('ann');
      await tallies.save(opened);
      // When 10 commands run at once through the retry helper (spread over both instances)
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 === 0 ? tallies : otherTallies).update('tally-retry', (t) => t.add(i), {
            attempts: 10,
          }),
        ),
      );
      // Then all succeed and each value is stored exactly once
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      const stored = await rows('tally-retry');
      expect(stored).toHaveLength(11);
      expect(
        stored
          .slice(1)
          .map((r) => r.body.value)
          .sort((a, b) => a! - b!),
      ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const loaded = await tallies.load('tally-retry');
      expect(loaded.version).toBe(11);
      expect([...loaded.values].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });

    it('gives up after the default 3 tries when the conflict persists', async () => {
      // Given a command that always loses (its own write bumps the stream behind its back)
      const opened = tallies.create('tally-give-up');
      opened.open('ann');
      await tallies.save(opened);
      let tries = 0;
      // When it runs through update with the defaults
      const attempt = tallies.update('tally-give-up', async (t) => {
        tries += 1;
        await otherTallies.update('tally-give-up', (o) => o.add(-tries));
        t.add(tries);
      });
      // Then it fails with the conflict after exactly 3 tries
      await expect(attempt).rejects.toBeInstanceOf(VersionConflictError);
      expect(tries).toBe(3);
    });

    it('publishes saved events on the EventBus only after commit, never for a conflicted save', async () => {
      // Given a listener that checks, from another connection, that each event it gets is committed
      const bus = app.get(EventBus);
      const checks: Promise<{ writer: string; visible: boolean }>[] = [];
      const subscription = bus.subscribe((event) => {
        if (!(event instanceof TallyAdded)) return;
        checks.push(
          db
            .query('SELECT 1 FROM messages WHERE stream_id = $1 AND body->>$2 = $3', [
              'tally-bus',
              'writer',
              event.writer,
            ])
            .then((found) => ({ writer: event.writer, visible: found.length === 1 })),
        );
      });
      try {
        const opened = tallies.create('tally-bus');
        opened.open('ann');
        await tallies.save(opened);
        const [a, b] = await Promise.all([tallies.load('tally-bus'), tallies.load('tally-bus')]);
        a.add(1, 'bus-a');
        b.add(2, 'bus-b');
        // When two saves race and one conflicts
        const outcomes = await Promise.allSettled([tallies.save(a), tallies.save(b)]);
        // Then the bus got exactly the winner's event, and it was already committed when it arrived
        const winner = outcomes[0].status === 'fulfilled' ? 'bus-a' : 'bus-b';
        expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(1);
        expect(await Promise.all(checks)).toEqual([{ writer: winner, visible: true }]);
      } finally {
        subscription.unsubscribe();
      }
    });

    it('correlation: a save takes the current context; an EventBus handler saving gets the event as its cause; options override', async () => {
      const ids = (streamId: string) =>
        db.query<{ index: string; correlation_id: string; causation_id: string }>(
          'SELECT index::text, correlation_id, causation_id FROM messages WHERE stream_id = $1 ORDER BY index',
          [streamId],
        );
      // Given a bus handler that records its context and, for the first tally event, saves another aggregate
      const bus = app.get(EventBus);
      const seen: (CorrelationContext | undefined)[] = [];
      const reactions: Promise<unknown>[] = [];
      const subscription = bus.subscribe((event) => {
        if (!(event instanceof TallyOpened) || event.owner !== 'corr') return;
        seen.push(currentCorrelation());
        const follow = tallies.create('tally-follow');
        follow.open('follow');
        reactions.push(tallies.save(follow));
      });
      try {
        // When a tally is saved inside a correlation (as an HTTP request or a handler would run it)
        const opened = tallies.create('tally-corr');
        opened.open('corr');
        await runWithCorrelation(
          { correlationId: 'req-1', causationId: 'cmd-1', traceparent: null },
          () => tallies.save(opened),
        );
        await Promise.all(reactions);
        // Then its event is in that correlation, caused by the command
        const [saved] = await ids('tally-corr');
        expect(saved).toMatchObject({ correlation_id: 'req-1', causation_id: 'cmd-1' });
        // And the bus handler ran in the event's correlation, and what it saved is caused by the event
        expect(seen).toEqual([
          { correlationId: 'req-1', causationId: saved.index, traceparent: null },
        ]);
        expect(await ids('tally-follow')).toEqual([
          expect.objectContaining({ correlation_id: 'req-1', causation_id: saved.index }),
        ]);
      } finally {
        subscription.unsubscribe();
      }
      // And explicit options win over the context; outside any context a save starts its own correlation
      const explicit = tallies.create('tally-explicit');
      explicit.open('x');
      await runWithCorrelation(
        { correlationId: 'req-2', causationId: 'cmd-2', traceparent: null },
        () => tallies.save(explicit, { correlationId: 'mine', causationId: 'cmd-9' }),
      );
      expect(await ids('tally-explicit')).toEqual([
        expect.objectContaining({ correlation_id: 'mine', causation_id: 'cmd-9' }),
      ]);
      const alone = tallies.create('tally-alone');
      alone.open('y');
      await tallies.save(alone);
      const [own] = await ids('tally-alone');
      expect(own.correlation_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(own.causation_id).toBe(own.correlation_id);
    });

    it('refuses to save an event class the aggregate does not declare, writing nothing', async () => {
      // Given an aggregate that applied an undeclared event
      @DomainEvent('Stranger')
      class Stranger {}
      const tally = tallies.create('tally-stranger');
      tally.apply(new Stranger());
      // When it is saved, Then it fails before writing
      await expect(tallies.save(tally)).rejects.toMatchObject({ code: 'invalid_aggregate' });
      expect(await rows('tally-stranger')).toHaveLength(0);
    });

    it('load of an empty stream throws AggregateNotFoundError; find returns null', async () => {
      await expect(tallies.load('tally-none')).rejects.toMatchObject({
        code: 'aggregate_not_found',
      });
      await expect(tallies.find('tally-none')).resolves.toBeNull();
      expect(() => tallies.create('bad id')).toThrow(
        // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- Jest types asymmetric matchers as any
        expect.objectContaining({ code: 'invalid_stream_id' }),
      );
    });

    it('delete: a soft-deleted aggregate throws StreamDeletedError, is re-created after its last version; a tombstoned one throws for ever', async () => {
      // Given a tally at version 2
      const tally = tallies.create('tally-deleted');
      tally.open('ann');
      tally.add(1);
      await tallies.save(tally);
      // When it is deleted with the version it was saved at
      const deleted = await tallies.delete('tally-deleted', { expectedVersion: tally.version });
      expect(deleted).toMatchObject({ mode: 'soft', lastVersion: 2 });
      expect(deleted.index).toBeGreaterThan(0);
      // Then loading it (in either process) throws StreamDeletedError with the last version
      await expect(otherTallies.load('tally-deleted')).rejects.toBeInstanceOf(StreamDeletedError);
      await expect(tallies.find('tally-deleted')).rejects.toMatchObject({ lastVersion: 2 });
      // And a new aggregate saved under the id goes on at version 3, its old events hidden
      const again = tallies.create('tally-deleted');
      again.open('bob');
      await tallies.save(again);
      expect(again.version).toBe(3);
      const loaded = await tallies.load('tally-deleted');
      expect([loaded.owner, loaded.values, loaded.version]).toEqual(['bob', [], 3]);
      // When it is tombstoned
      await tallies.delete('tally-deleted', { mode: 'tombstone' });
      // Then every call throws StreamTombstonedError
      await expect(tallies.load('tally-deleted')).rejects.toBeInstanceOf(StreamTombstonedError);
      const late = tallies.create('tally-deleted');
      late.open('eve');
      await expect(tallies.save(late, { expectedVersion: 'any' })).rejects.toBeInstanceOf(
        StreamTombstonedError,
      );
    });

    it('delete with a stale expected version is a VersionConflictError, and deletes nothing', async () => {
      const tally = tallies.create('tally-stale');
      tally.open('ann');
      await tallies.save(tally);
      await expect(tallies.delete('tally-stale', { expectedVersion: 5 })).rejects.toBeInstanceOf(
        VersionConflictError,
      );
      expect((await tallies.load('tally-stale')).owner).toBe('ann');
    });
  },
);
