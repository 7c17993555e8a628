import type { BuildRow } from './sql/builds.sql.js';
import type { GroupPositionsRow } from './sql/positions.sql.js';
import { versionStatuses } from './version-status.js';

const row = (
  version: number,
  state: BuildRow['state'],
  stopAt: string | null = null,
): BuildRow => ({
  projection: 'p',
  version,
  build: 1,
  schema_name: `p_v${version}`,
  consumers: version === 1 ? 'p' : `p@v${version}`,
  tables: ['t'],
  state,
  stop_at: stopAt,
  live_from: null,
  promote_at_lag: 0,
  created_at: new Date(0),
  promoted_at: null,
  retired_at: null,
});
const at = (lowest: number, live: boolean): GroupPositionsRow => ({
  lowest: String(lowest),
  highest: String(lowest),
  live_owner: live,
});

describe('versionStatuses', () => {
  it('measures a candidate against the serving build while a process runs that, else against the head', () => {
    // Given v1 serving at 90 (run by a live process) and a candidate at 60, head 100
    const rows = [row(1, 'serving'), row(2, 'candidate')];
    const live = versionStatuses(
      rows,
      new Map([
        ['p', at(90, true)],
        ['p@v2', at(60, true)],
      ]),
      100,
    );
    // Then the candidate's lag is to v1's position, v1's to the head
    expect(live.map((s) => [s.state, s.position, s.lag])).toEqual([
      ['serving', 90, 10],
      ['candidate', 60, 30],
    ]);
    // When nobody runs v1, the candidate's lag is to the head
    const alone = versionStatuses(
      rows,
      new Map([
        ['p', at(90, false)],
        ['p@v2', at(60, true)],
      ]),
      100,
    );
    expect(alone[1].lag).toBe(40);
  });

  it('measures a previous build against its stop', () => {
    const [previous] = versionStatuses(
      [row(1, 'previous', '80'), row(2, 'serving')],
      new Map([
        ['p', at(75, true)],
        ['p@v2', at(100, true)],
      ]),
      100,
    );
    expect([previous.lag, previous.stopAt, previous.running]).toEqual([5, 80, true]);
  });
});
