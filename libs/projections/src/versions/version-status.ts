import { toPosition } from '@ordinal/pg';
import { position } from './build-gate.js';
import type { ProjectionVersionStatus } from './projection-version-status.js';
import type { BuildRow } from './sql/builds.sql.js';
import type { GroupPositionsRow } from './sql/positions.sql.js';

/**
 * Each build as reports show it. Its lag is to its target: the head; for a candidate held
 * at the serving build (a live process runs that one), the serving build's position; for a
 * stopped build, its stop. `awaiting`: the previous builds a late row may still reach.
 */
export function versionStatuses(
  rows: BuildRow[],
  at: Map<string, GroupPositionsRow>,
  head: number,
  awaiting: ReadonlySet<string> = new Set(),
): ProjectionVersionStatus[] {
  const serving = rows.find((r) => r.state === 'serving');
  return rows.map((row) => {
    const pos = position(at.get(row.consumers)?.lowest ?? null) ?? 0;
    let target = head;
    if (row.state === 'candidate' && serving && serving.stop_at === null) {
      const s = at.get(serving.consumers);
      if (s?.live_owner) target = position(s.lowest) ?? 0;
    }
    if (row.stop_at !== null && row.state !== 'candidate') target = toPosition(row.stop_at);
    return {
      version: row.version,
      build: row.build,
      state: row.state,
      consumers: row.consumers,
      schema: row.schema_name,
      tables: row.tables,
      position: pos,
      lag: Math.max(0, target - pos),
      running: at.get(row.consumers)?.live_owner ?? false,
      stopAt: position(row.stop_at),
      awaitingLate: awaiting.has(row.consumers),
      liveFrom: position(row.live_from),
      promoteAtLag: row.promote_at_lag,
      promotedAt: row.promoted_at?.toISOString() ?? null,
    };
  });
}
