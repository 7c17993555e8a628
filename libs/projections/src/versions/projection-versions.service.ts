import { Injectable, Logger } from '@nestjs/common';
import { LogReader } from '@ordinal/log';
import { execute, type SqlRunner } from '@ordinal/pg';
import type { BatchGate } from '@ordinal/subscriptions';
import { DataSource, type EntityManager } from 'typeorm';
import { ProjectionVersionConflictError, ProjectionVersionNotFoundError } from '../errors/index.js';
import { buildConsumers, buildSchema, type BuildKey } from './version-names.js';
import {
  clearBuildLiveFrom,
  insertBuild,
  readAllBuilds,
  readBuilds,
  setBuildTables,
  updateBuild,
  type BuildRow,
} from './sql/builds.sql.js';
import {
  forgetGroup,
  readGroupPositions,
  setGroupLiveFrom,
  type GroupPositionsRow,
} from './sql/positions.sql.js';
import { switchViews } from './switch-views.js';
import { buildGate, position } from './build-gate.js';
import { beforeStop, buildsToRun } from './builds-to-run.js';
import { versionStatuses } from './version-status.js';
import {
  createSchema,
  createTableLike,
  dropSchema,
  ownSequence,
  readSequenceDefaults,
  setSearchPath,
} from './sql/views.sql.js';
import type { ProjectionVersionStatus } from './projection-version-status.js';

/** What the code of a process declares for a projection. */
export interface DeclaredProjection {
  projection: string;
  version: number;
  /** Read-model tables (from `readModels`); the views are named after them. */
  tables: string[];
  /** Automatic promotion once this close; null: by hand only. */
  promoteAtLag: number | null;
  /** Creates a new build's tables (search_path is its schema); default: shaped like the serving build's. */
  createTables?: (manager: EntityManager) => Promise<void>;
}

/**
 * Versions and builds of projections (docs/projections.md, "Versions and blue/green
 * deploys"): which builds a process runs, the gate of each batch, promotion, rollback and
 * retirement. Everything but `register`, `runnable` and `startBuild` is SQL only, so the
 * server (which has no projection code) promotes, rolls back and retires.
 */
@Injectable()
export class ProjectionVersionsService {
  private readonly logger = new Logger(ProjectionVersionsService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly reader: LogReader,
  ) {}

  /**
   * Records what this code declares: the first build of a projection serves at once (from the
   * default schema, where its migrations put its tables); a higher version than any recorded
   * starts as a candidate in its own schema; an existing build gets the code's tables. Which
   * builds then run is `runnable`'s answer (a version retired, or older than every recorded
   * one, runs nothing new).
   */
  async register(declared: DeclaredProjection): Promise<void> {
    const { projection, version } = declared;
    await this.dataSource.transaction(async (manager) => {
      const rows = await execute<BuildRow>(manager, readBuilds(projection, true));
      const mine = rows.filter((r) => r.version === version);
      const kept = mine.filter((r) => r.state !== 'retired');
      if (kept.length > 0) {
        for (const row of kept)
          await execute(manager, setBuildTables(projection, version, row.build, declared.tables));
        return;
      }
      if (rows.length === 0) {
        const [{ schema }] = await manager.query<{ schema: string }[]>(
          'SELECT current_schema() AS schema',
        );
        await this.insert(manager, declared, 1, schema, 'serving');
        return;
      }
      const highest = Math.max(...rows.map((r) => r.version));
      if (mine.length > 0 || version < highest) {
        this.logger.warn(
          `Projection '${projection}' v${version} is ${mine.length > 0 ? 'retired' : `older than v${highest}`}: this process does not run it`,
        );
        return;
      }
      await this.createCandidate(manager, declared, rows, 1);
    });
  }

  /**
   * The builds a process with the declared code runs now (see buildsToRun), among every build
   * of the projection (`rows`). A previous build runs until it has reached its stop; only those
   * named in `running` (the ones this process runs) are looked at, or every one with `'all'`
   * (at start): a previous build nobody runs any more stays where it stopped. `known`: every
   * build's row, read once for several projections (else read here). `watching`: the
   * positions this process's members of a build watch for a late row.
   *
   * A previous build at its stop still runs while a row may arrive late at or below it
   * (concurrent mode): such a row's side effect is the previous build's, the build promoted
   * over it gets it as a replay. So it is left only once no passed position at or below its
   * stop is watched, in the database (whoever owns the partition) or by a member here (which
   * also waits for a transaction that inserted while the position was watched).
   */
  async runnable(
    declared: DeclaredProjection,
    running: ReadonlySet<string> | 'all',
    known?: BuildRow[],
    watching: (consumers: string) => readonly number[] = () => [],
  ): Promise<{ rows: BuildRow[]; run: BuildRow[] }> {
    const rows =
      known?.filter((r) => r.projection === declared.projection) ??
      (await this.builds(declared.projection));
    const unfinished = new Set<string>();
    for (const row of rows) {
      if (row.version !== declared.version || row.state !== 'previous') continue;
      if (running !== 'all' && !running.has(row.consumers)) continue;
      const stopAt = position(row.stop_at) ?? 0;
      if (
        beforeStop(row, await this.groupPositions(this.dataSource.manager, row.consumers)) ||
        watching(row.consumers).some((p) => p <= stopAt) ||
        (await this.awaitingLate(row))
      )
        unfinished.add(row.consumers);
    }
    return { rows, run: buildsToRun(rows, declared.version, unfinished) };
  }

  /** Whether a row may still arrive late at or below a stopped build's stop (see runnable). */
  private async awaitingLate(row: BuildRow): Promise<boolean> {
    const stopAt = position(row.stop_at);
    return stopAt !== null && this.reader.lateRowPossibleAtOrBelow(stopAt);
  }

  /** A blue/green rebuild: a new build of the declared version, a candidate in its own schema. */
  async startBuild(declared: DeclaredProjection): Promise<BuildRow> {
    return this.dataSource.transaction(async (manager) => {
      const rows = await execute<BuildRow>(manager, readBuilds(declared.projection, true));
      const same = rows.filter((r) => r.version === declared.version);
      const open = same.find((r) => r.state === 'candidate');
      if (open)
        throw new ProjectionVersionConflictError(
          declared.projection,
          `build ${open.build} of v${open.version} is already being built; promote or retire it first`,
        );
      return this.createCandidate(
        manager,
        declared,
        rows,
        Math.max(0, ...same.map((r) => r.build)) + 1,
      );
    });
  }

  /**
   * In an in-place rebuild's transaction: search_path is the build's schema (the reset clears
   * its tables), and its replay boundary goes back to the checkpoint's (the head now).
   */
  async resetInPlace(manager: EntityManager, key: BuildKey): Promise<void> {
    const [row] = (await execute<BuildRow>(manager, readBuilds(key.projection))).filter(
      (r) => r.version === key.version && r.build === key.build,
    );
    if (!row) return;
    await execute(manager, setSearchPath(row.schema_name));
    await execute(manager, clearBuildLiveFrom(key.projection, key.version, key.build));
  }

  /** The gate of every batch of a build (see buildGate). */
  gate(key: BuildKey): (manager: EntityManager) => Promise<BatchGate> {
    return buildGate(key, this.logger);
  }

  /**
   * Promotes a build of `version` (its latest candidate, else its latest previous build) in
   * one transaction: the views named after the read-model tables point at its schema, the
   * serving build becomes `previous` and stops at its position, the promoted one runs live
   * above it. Racing promotions serialise on the rows; the loser gets a conflict.
   */
  async promote(projection: string, version: number): Promise<BuildRow> {
    return this.dataSource.transaction(async (manager) => {
      const rows = await this.locked(manager, projection);
      const same = rows.filter((r) => r.version === version && r.state !== 'retired');
      if (same.length === 0) throw new ProjectionVersionNotFoundError(projection, version);
      const target =
        latest(same.filter((r) => r.state === 'candidate')) ??
        latest(same.filter((r) => r.state === 'previous'));
      if (!target)
        throw new ProjectionVersionConflictError(
          projection,
          `v${version} is already serving; nothing to promote`,
        );
      return this.switchTo(manager, target, rows);
    });
  }

  /**
   * Promotes exactly this build while it is still a candidate (an automatic promotion: every
   * process running the candidate may try; those that lost the race get a conflict instead of
   * promoting what `promote(version)` would find next, a previous build of the same version).
   */
  async promoteCandidate(key: BuildKey): Promise<BuildRow> {
    return this.dataSource.transaction(async (manager) => {
      const rows = await this.locked(manager, key.projection);
      const target = rows.find(
        (r) => r.version === key.version && r.build === key.build && r.state === 'candidate',
      );
      if (!target)
        throw new ProjectionVersionConflictError(
          key.projection,
          `v${key.version} build ${key.build} is no candidate any more; nothing to promote`,
        );
      return this.switchTo(manager, target, rows);
    });
  }

  /** Points readers back at the latest previous build (while its tables are kept). */
  async rollback(projection: string): Promise<BuildRow> {
    return this.dataSource.transaction(async (manager) => {
      const rows = await this.locked(manager, projection);
      const previous = rows
        .filter((r) => r.state === 'previous')
        .sort((a, b) => (position(b.stop_at) ?? 0) - (position(a.stop_at) ?? 0))[0];
      if (!previous)
        throw new ProjectionVersionConflictError(
          projection,
          'there is no previous version to roll back to (it was retired, or none was ever promoted over)',
        );
      return this.switchTo(manager, previous, rows);
    });
  }

  /**
   * Drops the tables (exactly their schemas), checkpoints and parked messages of `version`'s
   * builds that do not serve; never automatic. Returns the schemas dropped.
   */
  async retire(projection: string, version: number): Promise<string[]> {
    return this.dataSource.transaction(async (manager) => {
      const rows = await this.locked(manager, projection);
      if (!rows.some((r) => r.version === version))
        throw new ProjectionVersionNotFoundError(projection, version);
      // Retired already (a retry, a second operator): nothing left to drop.
      const same = rows.filter((r) => r.version === version && r.state !== 'retired');
      if (same.length === 0) return [];
      const [{ schema: home }] = await manager.query<{ schema: string }[]>(
        'SELECT current_schema() AS schema',
      );
      const doomed = same.filter((r) => r.state !== 'serving' && r.schema_name !== home);
      if (doomed.length === 0)
        throw new ProjectionVersionConflictError(
          projection,
          `v${version} is serving; promote or roll back to another version before retiring it`,
        );
      for (const row of doomed) {
        await execute(manager, dropSchema(row.schema_name));
        for (const query of forgetGroup(row.consumers)) await execute(manager, query);
        await execute(
          manager,
          updateBuild(projection, row.version, row.build, {
            state: 'retired',
            stopAt: position(row.stop_at),
            liveFrom: position(row.live_from),
          }),
        );
      }
      this.logger.log(
        `Projection '${projection}' v${version}: retired, dropped schema ${doomed.map((r) => r.schema_name).join(', ')}`,
      );
      return doomed.map((r) => r.schema_name);
    });
  }

  /** Every build of a projection (or of all), oldest first. */
  builds(projection?: string): Promise<BuildRow[]> {
    return execute<BuildRow>(
      this.dataSource.manager,
      projection === undefined ? readAllBuilds() : readBuilds(projection),
    );
  }

  /** The build that serves reads, or null when the projection has none recorded. */
  async serving(projection: string): Promise<BuildRow | null> {
    return (await this.builds(projection)).find((r) => r.state === 'serving') ?? null;
  }

  /** Every build of a projection with its position and lag (a candidate's lag is to its target). */
  async status(projection: string): Promise<ProjectionVersionStatus[]> {
    const rows = await this.builds(projection);
    const head = await this.reader.safeHead();
    const at = new Map<string, GroupPositionsRow>();
    const awaiting = new Set<string>();
    for (const row of rows) {
      at.set(row.consumers, await this.groupPositions(this.dataSource.manager, row.consumers));
      if (row.state === 'previous' && (await this.awaitingLate(row))) awaiting.add(row.consumers);
    }
    return versionStatuses(rows, at, head, awaiting);
  }

  private async switchTo(
    manager: EntityManager,
    target: BuildRow,
    rows: BuildRow[],
  ): Promise<BuildRow> {
    const serving = rows.find((r) => r.state === 'serving');
    let stopAt = 0;
    if (serving) {
      const at = await this.groupPositions(manager, serving.consumers);
      stopAt = position(serving.stop_at) ?? position(at.highest) ?? 0;
      const moved = await switchViews(manager, target, serving);
      await execute(
        manager,
        updateBuild(serving.projection, serving.version, serving.build, {
          state: 'previous',
          stopAt,
          liveFrom: position(serving.live_from),
          schema: moved ?? undefined,
        }),
      );
    } else {
      await switchViews(manager, target, null);
    }
    await execute(
      manager,
      updateBuild(target.projection, target.version, target.build, {
        state: 'serving',
        stopAt: null,
        liveFrom: stopAt,
      }),
    );
    await execute(manager, setGroupLiveFrom(target.consumers, stopAt));
    this.logger.log(
      `Projection '${target.projection}': v${target.version} (build ${target.build}) serves reads; ` +
        (serving
          ? `v${serving.version} (build ${serving.build}) is previous and stops at index ${stopAt}`
          : 'no build served before'),
    );
    return { ...target, state: 'serving', stop_at: null, live_from: String(stopAt) };
  }

  private async locked(manager: EntityManager, projection: string): Promise<BuildRow[]> {
    const rows = await execute<BuildRow>(manager, readBuilds(projection, true));
    if (rows.length === 0) throw new ProjectionVersionNotFoundError(projection);
    return rows;
  }

  private async insert(
    manager: EntityManager,
    declared: DeclaredProjection,
    build: number,
    schema: string,
    state: 'candidate' | 'serving',
  ): Promise<BuildRow> {
    const key = { projection: declared.projection, version: declared.version, build };
    const [row] = await execute<BuildRow>(
      manager,
      insertBuild({
        ...key,
        schema,
        consumers: buildConsumers(key),
        tables: declared.tables,
        state,
        promoteAtLag: declared.promoteAtLag,
      }),
    );
    if (row) return row;
    // Another process recorded it meanwhile.
    const [existing] = (await execute<BuildRow>(manager, readBuilds(declared.projection))).filter(
      (r) => r.version === declared.version && r.build === build,
    );
    return existing;
  }

  /** A candidate build: its schema, its tables (the user's hook, or shaped like the serving build's), its row. */
  private async createCandidate(
    manager: EntityManager,
    declared: DeclaredProjection,
    rows: BuildRow[],
    build: number,
  ): Promise<BuildRow> {
    const key = { projection: declared.projection, version: declared.version, build };
    const schema = buildSchema(key);
    for (const query of createSchema(
      schema,
      `Read model of projection ${declared.projection} v${declared.version} build ${build} (Ordinal, docs/projections.md)`,
    ))
      await execute(manager, query);
    await execute(manager, setSearchPath(schema));
    const serving = rows.find((r) => r.state === 'serving');
    if (declared.createTables) await declared.createTables(manager);
    else if (serving)
      for (const table of declared.tables) {
        await execute(manager, createTableLike(table, schema, serving.schema_name));
        const serials = await execute<{ column: string }>(
          manager,
          readSequenceDefaults(schema, table),
        );
        for (const { column } of serials)
          for (const query of ownSequence(schema, table, column)) await execute(manager, query);
      }
    const row = await this.insert(manager, declared, build, schema, 'candidate');
    this.logger.log(
      `Projection '${declared.projection}' v${declared.version} (build ${build}): a candidate in schema ${schema}, replaying from the start while ${serving ? `v${serving.version}` : 'nothing'} serves`,
    );
    return row;
  }

  private async groupPositions(runner: SqlRunner, group: string): Promise<GroupPositionsRow> {
    const [row] = await execute<GroupPositionsRow>(runner, readGroupPositions(group));
    return row;
  }
}

function latest(rows: BuildRow[]): BuildRow | undefined {
  return rows.sort((a, b) => a.version - b.version || a.build - b.build).at(-1);
}
