import type { DirectoryRow } from '../sql/index.js';
import type { SubscriptionStatus } from '../subscription-context.js';
import { buildReports, type LocalView } from './build-reports.js';

const row = (over: Partial<DirectoryRow>): DirectoryRow => ({
  name: 'counter',
  kind: 'projection',
  group_name: 'counter',
  owner: 'web-1:10:aa',
  owner_live: true,
  owner_stale: false,
  lease_expires_in_ms: 2500,
  pid: 10,
  host: 'web-1',
  heartbeat_age_ms: 120,
  position: '40',
  live_from: '0',
  state: 'running',
  last_error: null,
  stream: 'types:Tick',
  progress_age_ms: 10,
  parked: 0,
  standbys: [{ id: 'web-2:20:bb', pid: 20, host: 'web-2', heartbeatAgeMs: 300 }],
  ...over,
});

const status = (over: Partial<SubscriptionStatus>): SubscriptionStatus => ({
  name: 'counter',
  kind: 'projection',
  stream: 'types:Tick',
  position: 40,
  liveFrom: 0,
  state: 'running',
  lastError: null,
  lastErrorAt: null,
  retries: 2,
  pendingLate: [],
  lateDelivered: 0,
  skipped: 1,
  parkedHere: 0,
  watermarked: false,
  ...over,
});

describe('buildReports', () => {
  it("reports another process's consumer with its owner and standbys, without the owner's own counters", () => {
    const [report] = buildReports([row({})], new Map(), 50, 'web-3:30:cc');
    expect(report).toMatchObject({
      name: 'counter',
      state: 'running',
      lag: 10,
      owner: { pid: 10, self: false, stale: false, leaseExpiresInMs: 2500 },
      standbys: [{ pid: 20, host: 'web-2', self: false }],
    });
    for (const field of ['retries', 'skipped', 'pendingLate', 'lateDelivered', 'lastErrorAt'])
      expect(report).not.toHaveProperty(field);
  });

  it('says stale while the owner is overdue, unowned once its lease ran out', () => {
    expect(buildReports([row({ owner_stale: true })], new Map(), 50, 'x')[0]).toMatchObject({
      state: 'stale',
      owner: { stale: true },
    });
    expect(buildReports([row({ owner_live: false })], new Map(), 50, 'x')[0]).toMatchObject({
      state: 'unowned',
      owner: null,
    });
  });

  it('reports its own consumer from its own status, counters included', () => {
    const locals = new Map<string, LocalView>([
      ['counter', { status: status({}), ownedHere: true }],
    ]);
    const [report] = buildReports([row({ owner: 'me:1:aa' })], locals, 50, 'me:1:aa');
    expect(report).toMatchObject({ retries: 2, skipped: 1, owner: { self: true } });
  });

  it('folds partitions: the group lists the processes that own none of them as its standbys', () => {
    const rows = [
      row({
        name: 'counter#0',
        standbys: [
          { id: 'b', pid: 2, host: 'h', heartbeatAgeMs: 1 },
          { id: 'c', pid: 3, host: 'h', heartbeatAgeMs: 1 },
        ],
      }),
      row({
        name: 'counter#1',
        owner: 'b',
        pid: 2,
        standbys: [
          { id: 'web-1:10:aa', pid: 10, host: 'web-1', heartbeatAgeMs: 1 },
          { id: 'c', pid: 3, host: 'h', heartbeatAgeMs: 1 },
        ],
      }),
    ];
    const [report] = buildReports(rows, new Map(), 50, 'x');
    expect(report.owner).toBeNull();
    expect(report.standbys.map((s) => s.id)).toEqual(['c']);
    expect(report.partitions!.map((p) => p.owner!.pid)).toEqual([10, 2]);
    expect(report).not.toHaveProperty('retries');
  });
});
