import type { INestApplicationContext } from '@nestjs/common';
import fc from 'fast-check';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startEventStoreContext } from '@ordinal/test-support/event-store-context';
import { Aggregate } from './aggregate.decorator.js';
import { AggregateRoot } from './aggregate-root.js';
import type { AggregateRepository } from './aggregate-repository.js';
import { aggregateRepositoryToken } from './aggregate-repository.token.js';
import { DomainEvent } from '../events/domain-event.decorator.js';
import { StreamStore } from '../streams/stream-store.service.js';
import { SnapshotVersionExceedsStreamError } from '../errors/index.js';

@DomainEvent('Mixed')
class Mixed {
  constructor(readonly value: number) {}
}

/** Order-sensitive state, so a wrong or repeated event changes the result. */
interface FoldState {
  sum: number;
  hash: number;
  last: number[];
}

function fold(state: FoldState, value: number): FoldState {
  return {
    sum: state.sum + value,
    hash: (state.hash * 31 + value + 7) % 1_000_000_007,
    last: [...state.last, value].slice(-3),
  };
}

const EMPTY: FoldState = { sum: 0, hash: 1, last: [] };

@Aggregate({ events: [Mixed] })
class Mixer extends AggregateRoot {
  state: FoldState = EMPTY;
  /** Events applied since construction: not part of the snapshot, tells what load replayed. */
  replayed = 0;

  mix(value: number): void {
    this.apply(new Mixed(value));
  }

  onMixed(event: Mixed): void {
    this.state = fold(this.state, event.value);
    this.replayed += 1;
  }

  override toSnapshot(): unknown {
    return { state: this.state };
  }
}

@Aggregate({ events: [Mixed], snapshotEvery: 5 })
class PolicyMixer extends Mixer {}

describe('Snapshots (A3)', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let mixers: AggregateRepository<Mixer>;
  let store: StreamStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    // A small page size so loads also cross page boundaries
    app = await startEventStoreContext(db.url, {
      aggregates: [Mixer, PolicyMixer],
      eventSourcing: { readPageSize: 7 },
    });
    mixers = app.get(aggregateRepositoryToken(Mixer));
    store = app.get(StreamStore);
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('loads snapshot + later events to the same state as a full replay (property)', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.integer({ min: 1, max: 6 }),
        async (values, snapshotPicks, saveEvery) => {
          // Given a stream written in saves of `saveEvery` events, with snapshots at random saved versions
          const streamId = `mixer-p${run++}`;
          const writer = mixers.create(streamId);
          const snapshotAt = new Set(snapshotPicks.map((p) => (p % values.length) + 1));
          let snapshots = 0;
          for (const [i, value] of values.entries()) {
            writer.mix(value);
            const version = i + 1;
            if (version % saveEvery === 0 || version === values.length || snapshotAt.has(version))
              await mixers.save(writer);
            if (snapshotAt.has(version)) {
              await mixers.saveSnapshot(writer);
              snapshots = version;
            }
          }
          // When it is loaded (newest snapshot + later events)
          const loaded = await mixers.load(streamId);
          // Then its state equals a fold over every event, as a replay without snapshots gives
          const expected = values.reduce(fold, EMPTY);
          expect(loaded.state).toEqual(expected);
          expect(loaded.version).toBe(values.length);
          const plain = await store.readStream(streamId, { snapshot: false });
          expect(plain.events.map((e) => (e.data as { value: number }).value)).toEqual(values);
          // And only the events after the newest snapshot were applied
          expect(loaded.replayed).toBe(values.length - snapshots);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('snapshots by policy when a save crosses a multiple of snapshotEvery', async () => {
    // Given an aggregate with snapshotEvery: 5
    const policy: AggregateRepository<PolicyMixer> = app.get(aggregateRepositoryToken(PolicyMixer));
    const mixer = policy.create('policy-1');
    // When 12 events are saved 4 at a time (versions 4, 8, 12)
    for (let i = 1; i <= 12; i++) {
      mixer.mix(i);
      if (i % 4 === 0) await policy.save(mixer);
    }
    // Then snapshots exist at 8 (crossed 5) and 12 (crossed 10), not at 4
    const snaps = await db.query<{ version: string }>(
      'SELECT version FROM snapshots WHERE stream_id = $1 ORDER BY version',
      ['policy-1'],
    );
    expect(snaps.map((s) => Number(s.version))).toEqual([8, 12]);
    expect((await policy.load('policy-1')).replayed).toBe(0);
  });

  it('refuses a snapshot ahead of the stream, on save and on load', async () => {
    // Given a stream at version 2
    const mixer = mixers.create('mixer-ahead');
    mixer.mix(1);
    mixer.mix(2);
    await mixers.save(mixer);
    // When a snapshot at version 3 is saved, Then SnapshotVersionExceedsStreamError and nothing stored
    await expect(store.saveSnapshot('mixer-ahead', 3, { state: EMPTY })).rejects.toMatchObject({
      code: 'snapshot_version_exceeds_stream',
      streamId: 'mixer-ahead',
      version: 3,
      current: 2,
    });
    expect(
      await db.query('SELECT 1 FROM snapshots WHERE stream_id = $1', ['mixer-ahead']),
    ).toHaveLength(0);
    // When a snapshot ahead of the stream is found at load (e.g. a restore without the newest events)
    await db.query(`INSERT INTO snapshots (stream_id, version, state) VALUES ($1, 9, '{}')`, [
      'mixer-ahead',
    ]);
    // Then load fails with the same error rather than a wrong state
    await expect(mixers.load('mixer-ahead')).rejects.toBeInstanceOf(
      SnapshotVersionExceedsStreamError,
    );
  });

  it('ignores a snapshot of another state schema and replays the stream', async () => {
    // Given a snapshot saved with schema version 7 (the aggregate's is 1)
    const mixer = mixers.create('mixer-schema');
    mixer.mix(5);
    mixer.mix(6);
    await mixers.save(mixer);
    await store.saveSnapshot('mixer-schema', 2, { state: { sum: 999, hash: 0, last: [] } }, 7);
    // When it loads, Then the stale-schema snapshot is not used
    const loaded = await mixers.load('mixer-schema');
    expect(loaded.state).toEqual([5, 6].reduce(fold, EMPTY));
    expect(loaded.replayed).toBe(2);
  });
});
