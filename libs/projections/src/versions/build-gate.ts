import type { Logger } from '@nestjs/common';
import { execute, toPosition } from '@ordinal/pg';
import type { BatchGate } from '@ordinal/subscriptions';
import type { EntityManager } from 'typeorm';
import { handOverBuild, readGateRows, type BuildRow } from './sql/builds.sql.js';
import { readGroupPositions, type GroupPositionsRow } from './sql/positions.sql.js';
import { setSearchPath } from './sql/views.sql.js';
import type { BuildKey } from './version-names.js';

/** A candidate applies every event as a replay while it waits for the serving build. */
const ALL_REPLAY = Number.MAX_SAFE_INTEGER;

/**
 * The gate of every batch of a build, in its transaction: reads its row and the serving one
 * FOR SHARE (a promotion waits for the batch), sets search_path to its schema, and bounds
 * the batch. A candidate stays at or below the serving build's position while a live process
 * runs that one (all its events are replays, their side effects are the serving build's);
 * when none does, the serving build is stopped where it is and the candidate runs live above.
 * A build with `stop_at` (previous, or serving after a hand-over) applies nothing above it.
 */
export function buildGate(
  key: BuildKey,
  logger: Logger,
): (manager: EntityManager) => Promise<BatchGate> {
  return async (manager) => {
    const rows = await execute<BuildRow>(
      manager,
      readGateRows(key.projection, key.version, key.build),
    );
    const me = rows.find((r) => r.version === key.version && r.build === key.build);
    if (!me || me.state === 'retired') return { upTo: 0, liveFrom: null };
    await execute(manager, setSearchPath(me.schema_name));
    if (me.state !== 'candidate')
      return { upTo: position(me.stop_at), liveFrom: position(me.live_from) };
    const serving = rows.find((r) => r.state === 'serving');
    if (!serving) return { upTo: null, liveFrom: position(me.live_from) };
    if (serving.stop_at !== null) return { upTo: null, liveFrom: toPosition(serving.stop_at) };
    const [at] = await execute<GroupPositionsRow>(manager, readGroupPositions(serving.consumers));
    if (at.live_owner) return { upTo: position(at.lowest) ?? 0, liveFrom: ALL_REPLAY };
    const stopAt = position(at.highest) ?? 0;
    await execute(
      manager,
      handOverBuild(serving.projection, serving.version, serving.build, stopAt),
    );
    logger.log(
      `Projection '${key.projection}': no process runs v${serving.version}; its candidate v${key.version} (build ${key.build}) runs the side effects after index ${stopAt}`,
    );
    return { upTo: null, liveFrom: stopAt };
  };
}

/** A stored position, or null. */
export function position(value: string | null): number | null {
  return value === null ? null : toPosition(value);
}
