import { beforeStop, buildsToRun } from './builds-to-run.js';
import type { BuildRow } from './sql/builds.sql.js';

const row = (
  version: number,
  build: number,
  state: BuildRow['state'],
  stopAt: string | null = null,
): BuildRow => ({
  projection: 'p',
  version,
  build,
  schema_name: `p_v${version}_b${build}`,
  consumers: `p@v${version}.${build}`,
  tables: ['t'],
  state,
  stop_at: stopAt,
  live_from: null,
  promote_at_lag: 0,
  created_at: new Date(0),
  promoted_at: null,
  retired_at: null,
});
const names = (rows: BuildRow[]) => rows.map((r) => r.consumers);

describe('buildsToRun', () => {
  it('runs the serving build and the candidate of its own version, whoever started the candidate', () => {
    // Given v1 build 1 serving and a blue/green rebuild of it (build 2) started elsewhere
    const rows = [row(1, 1, 'serving'), row(1, 2, 'candidate')];
    // Then a process with v1 code runs both, one with v2 code neither
    expect(names(buildsToRun(rows, 1, new Set()))).toEqual(['p@v1.1', 'p@v1.2']);
    expect(buildsToRun(rows, 2, new Set())).toEqual([]);
  });

  it('runs a previous build only while it is short of its stop, and a retired one never', () => {
    // Given a previous build, a retired one and the serving one of the same version
    const rows = [row(1, 1, 'retired', '5'), row(1, 2, 'previous', '10'), row(1, 3, 'serving')];
    // Then the previous build runs while named unfinished; the retired one not even then
    expect(names(buildsToRun(rows, 1, new Set(['p@v1.2', 'p@v1.1'])))).toEqual([
      'p@v1.2',
      'p@v1.3',
    ]);
    expect(names(buildsToRun(rows, 1, new Set()))).toEqual(['p@v1.3']);
  });
});

describe('beforeStop', () => {
  const at = (lowest: string | null) => ({ lowest, highest: lowest, live_owner: false });

  it('is true below the stop (its lowest partition counts), false at it or without a stop', () => {
    expect(beforeStop(row(1, 1, 'previous', '10'), at('9'))).toBe(true);
    expect(beforeStop(row(1, 1, 'previous', '10'), at(null))).toBe(true);
    expect(beforeStop(row(1, 1, 'previous', '10'), at('10'))).toBe(false);
    expect(beforeStop(row(1, 1, 'previous', '0'), at(null))).toBe(false);
    expect(beforeStop(row(1, 1, 'previous'), at('3'))).toBe(false);
  });
});
