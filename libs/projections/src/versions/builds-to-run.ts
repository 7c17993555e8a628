import { toPosition } from '@ordinal/pg';
import type { BuildRow } from './sql/builds.sql.js';
import type { GroupPositionsRow } from './sql/positions.sql.js';

/**
 * The builds a process with the code of `version` runs: that version's serving build and its
 * candidate (a new version, or a blue/green rebuild started in any process), and a previous
 * build of it while `unfinished` names it. Never a retired build, nor another version's.
 */
export function buildsToRun(
  rows: BuildRow[],
  version: number,
  unfinished: ReadonlySet<string>,
): BuildRow[] {
  return rows.filter(
    (row) =>
      row.version === version &&
      (row.state === 'serving' ||
        row.state === 'candidate' ||
        (row.state === 'previous' && unfinished.has(row.consumers))),
  );
}

/**
 * Whether a previous build has not reached its stop yet: below `stop_at` its side effects
 * are still its own (the build promoted over it runs them only above), so it runs until there.
 */
export function beforeStop(row: BuildRow, at: GroupPositionsRow): boolean {
  if (row.stop_at === null) return false;
  return (at.lowest === null ? 0 : toPosition(at.lowest)) < toPosition(row.stop_at);
}
