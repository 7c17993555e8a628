import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { DataSource, type EntityManager } from 'typeorm';
import { execute, ReadOnlyReplicaError } from '@ordinal/pg';
import { OWNERSHIP_OPTIONS, type OwnershipOptions } from './ownership-options.js';
import { Lease } from './lease.js';
import type { OwnedConsumer } from './owned-consumer.js';
import type { OwnershipTimings } from './ownership-options.js';
import { planGroup } from './ownership-plan.js';
import {
  claimLeases,
  forgetDeadProcesses,
  heartbeat,
  leasesOf,
  membersOf,
  readConsumerLeases,
  readGroups,
  registerConsumers,
  releaseLease,
  removeProcess,
  type ConsumerLeaseRow,
  type GroupStateRow,
} from './sql/index.js';

/** Ticks between two clean-ups of dead processes' rows. */
const CLEANUP_EVERY_TICKS = 10;

interface Entry {
  consumer: OwnedConsumer;
  lease: Lease | null;
  /** The consumer is being stopped (lost or released): not claimed again until it has. */
  stopping: Promise<void> | null;
  /** Stopping to hand it over: the lease is kept (and renewed) until the consumer stopped. */
  releasing: boolean;
}

interface Group {
  kind: string;
  /** Its lease rows exist (written at the first tick after joining). */
  registered: boolean;
  entries: Map<string, Entry>;
}

/**
 * One owner per consumer across every process on the database, with lease rows
 * (`consumer_leases`): a process claims a consumer's row for a time to live, renews every
 * lease it holds with one heartbeat per tick, and shares each group's consumers out with the
 * other live processes of that group (`planGroup`). A consumer whose owner died is claimed
 * within `takeoverMs`; a batch commits only through `Lease.fence` (owner and epoch checked in
 * its transaction). Needs nothing but PostgreSQL and works through a transaction pooler (every
 * statement is one transaction; no session state). It keeps one pooled connection for its
 * heartbeats and claims, so a renewal never queues behind batches holding the whole pool.
 */
@Injectable()
export class ConsumerOwnership implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ConsumerOwnership.name);
  /** This process's identity in lease rows: host, pid and a random part (a pid can be reused). */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly timings: OwnershipTimings;
  private readonly groups = new Map<string, Group>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private failing = false;
  private own: Promise<DataSource> | null = null;
  private ticks = 0;
  private readonly replica: boolean;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(OWNERSHIP_OPTIONS) options: OwnershipOptions,
  ) {
    this.replica = options.readOnly;
    // Its tables come with the log's migrations (LogLifecycle runs them in one run at start).
    this.timings = options.timings;
  }

  /** Runs a group's consumers (one, or a projection's partitions) wherever their share falls. */
  join(group: string, kind: string, consumers: OwnedConsumer[]): void {
    // Leases and checkpoints are rows: a replica reader cannot write them, so it runs no consumer.
    if (this.replica) {
      throw new ReadOnlyReplicaError(
        `${kind} '${group}' cannot run on a replica reader (role 'replica-reader'): leases and checkpoints are writes. Run projections, subscriptions and interfaces on a primary instance`,
      );
    }
    if (this.closed) return;
    this.groups.set(group, {
      kind,
      registered: false,
      entries: new Map(
        consumers.map((c) => [
          c.name,
          { consumer: c, lease: null, stopping: null, releasing: false },
        ]),
      ),
    });
    this.kick();
  }

  /** Stops the group's consumers here and gives their leases up for a peer. */
  async leave(group: string): Promise<void> {
    const entry = this.groups.get(group);
    if (!entry) return;
    this.groups.delete(group);
    await Promise.all([...entry.entries.values()].map((e) => this.handOver(e)));
  }

  /** Every lease of `kind` any process registered, with its owner process and its last recorded progress. */
  consumers(kind: string): Promise<ConsumerLeaseRow[]> {
    return execute<ConsumerLeaseRow>(this.dataSource.manager, readConsumerLeases(kind));
  }

  /** The lease this process holds on `name`, if any. */
  leaseOf(name: string): Lease | null {
    for (const group of this.groups.values()) {
      const lease = group.entries.get(name)?.lease;
      if (lease) return lease.isHeld() ? lease : null;
    }
    return null;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    await Promise.all([...this.groups.keys()].map((g) => this.leave(g)));
    await execute(this.dataSource.manager, removeProcess(this.owner)).catch(() => undefined);
    const own = this.own;
    this.own = null;
    await own?.then((ds) => ds.destroy()).catch(() => undefined);
  }

  /**
   * Where heartbeats and claims run: a connection of their own, outside the application's
   * pool (a DataSource of one connection with the same connection options, made at the first
   * tick and made again after an error), so a renewal never queues behind batches holding the
   * whole pool and the pool stays whole for the consumers (holding one of a pool of 3 took a
   * third of a replica's batches away). A pool of one connection (the embedded database)
   * gets no extra connection: there they take their turn on it like every other query.
   */
  private async connection(): Promise<EntityManager> {
    const max = (this.dataSource.options as { extra?: { max?: number } }).extra?.max;
    if (max !== undefined && max <= 1) return this.dataSource.manager;
    this.own ??= (async () => {
      const options = this.dataSource.options;
      // TypeORM types `extra` (the driver's pool settings) as any.
      const poolSettings =
        (options as { extra?: { application_name?: string; [setting: string]: unknown } }).extra ??
        {};
      const extra = {
        ...poolSettings,
        max: 1,
        application_name: `${poolSettings.application_name ?? 'ordinal'}-ownership`,
      };
      const own = new DataSource({
        ...options,
        extra,
        entities: [],
        migrations: [],
        subscribers: [],
        migrationsRun: false,
        synchronize: false,
        logging: false,
      });
      return own.initialize();
    })();
    const own = this.own;
    try {
      return (await own).manager;
    } catch (error) {
      if (this.own === own) this.own = null;
      throw error;
    }
  }

  /** Ticks now (or right after the tick in flight). */
  private kick(): void {
    if (this.closed) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.ticking = this.tick().finally(() => {
      this.ticking = null;
      if (this.closed) return;
      if (this.again) {
        this.again = false;
        this.kick();
      } else {
        this.timer = setTimeout(() => this.kick(), this.timings.tickMs);
      }
    });
  }

  private async tick(): Promise<void> {
    try {
      await this.renew();
      if (this.groups.size > 0) await this.rebalance();
      if (this.ticks++ % CLEANUP_EVERY_TICKS === 0) await this.cleanUp();
      if (this.failing) this.logger.log('Consumer ownership: the database answers again');
      this.failing = false;
    } catch (error) {
      if (!this.failing)
        this.logger.warn(
          `Consumer ownership: heartbeat failed (${(error as Error).message}); consumers stop once their leases run out`,
        );
      this.failing = true;
      const broken = this.own;
      this.own = null;
      await broken?.then((ds) => ds.destroy()).catch(() => undefined);
    }
  }

  private entries(): Entry[] {
    return [...this.groups.values()].flatMap((g) => [...g.entries.values()]);
  }

  /** One heartbeat: the process row and every lease held; a lease not renewed is lost. */
  private async renew(): Promise<void> {
    for (const entry of this.entries())
      if (entry.lease && !entry.lease.isHeld())
        this.lost(entry, 'its lease ran out before it could be renewed');
    const held = this.entries().filter((e) => e.lease);
    const progress: Record<string, unknown> = {};
    for (const entry of held) {
      const value = entry.consumer.progress?.();
      if (value !== undefined && value !== null) progress[entry.consumer.name] = value;
    }
    const connection = await this.connection();
    const sentAt = performance.now();
    const rows = await execute<{ name: string }>(
      connection,
      heartbeat(
        this.owner,
        process.pid,
        hostname(),
        this.timings.ttlMs,
        [...this.groups.keys()],
        held.map((e) => e.consumer.name),
        progress,
      ),
    );
    const renewed = new Set(rows.map((r) => r.name));
    for (const entry of held) {
      if (!entry.lease) continue;
      if (renewed.has(entry.consumer.name)) entry.lease.renewed(sentAt);
      else this.lost(entry, 'its lease expired or was taken over');
    }
  }

  private async rebalance(): Promise<void> {
    for (const [name, group] of this.groups) {
      if (group.registered) continue;
      await execute(
        await this.connection(),
        registerConsumers([...group.entries.keys()], group.kind, name),
      );
      group.registered = true;
    }
    const names = [...this.groups.keys()];
    const state = await execute<GroupStateRow>(await this.connection(), readGroups(names));
    const leases = leasesOf(state);
    const members = membersOf(state);
    for (const [name, group] of this.groups) {
      const owners = new Map(
        leases
          .filter((l) => l.group_name === name && l.live && l.owner)
          .map((l) => [l.name, l.owner!]),
      );
      const plan = planGroup({
        names: [...group.entries.keys()],
        owners,
        members: members.filter((m) => m.groups.includes(name)).map((m) => m.owner),
        me: this.owner,
      });
      for (const consumer of plan.release) {
        const entry = group.entries.get(consumer);
        if (entry?.lease && !entry.releasing) void this.handOver(entry);
      }
      const claimable = plan.claim.filter(
        (c) => !group.entries.get(c)?.stopping && !group.entries.get(c)?.lease,
      );
      if (claimable.length === 0) continue;
      const connection = await this.connection();
      const sentAt = performance.now();
      const claimed = await execute<{
        name: string;
        epoch: string;
        progress: unknown;
        progress_age_ms: number | null;
      }>(connection, claimLeases(claimable, this.owner, this.timings.ttlMs, claimable.length));
      for (const row of claimed) {
        const entry = group.entries.get(row.name);
        if (!entry || this.closed || this.groups.get(name) !== group) continue;
        const previous =
          row.progress === null || row.progress === undefined
            ? null
            : { progress: row.progress, ageMs: row.progress_age_ms ?? Number.POSITIVE_INFINITY };
        entry.lease = new Lease(
          row.name,
          this.owner,
          Number(row.epoch),
          sentAt,
          this.timings.ttlMs,
          previous,
        );
        this.logger.log(
          `Consumer ownership: this process now runs '${row.name}' (epoch ${row.epoch})`,
        );
        entry.consumer.acquired(entry.lease);
      }
    }
  }

  /**
   * Forgets processes without a heartbeat for `forgetAfterMs` (their rows, and the owner
   * named on the leases they left expired as long): one statement every few ticks, by
   * whichever processes are alive.
   */
  private async cleanUp(): Promise<void> {
    const rows = await execute<{ name: string; processes: number }>(
      await this.connection(),
      forgetDeadProcesses(this.timings.forgetAfterMs),
    );
    if (rows.length > 0)
      this.logger.log(
        `Consumer ownership: forgot the owner of ${rows.length} lease(s) left by processes without a heartbeat for ${this.timings.forgetAfterMs} ms`,
      );
  }

  /** The lease is gone: stop the consumer (its batch in flight cannot commit anyway). */
  private lost(entry: Entry, why: string): void {
    const lease = entry.lease;
    if (!lease) return;
    lease.revoke();
    entry.lease = null;
    this.logger.warn(
      `Consumer ownership: this process no longer runs '${entry.consumer.name}' (${why}); another process continues from its checkpoint`,
    );
    entry.stopping = entry.consumer
      .released()
      .catch(() => undefined)
      .finally(() => {
        entry.stopping = null;
      });
  }

  /** Stops the consumer, then gives its lease up (kept and renewed until the consumer stopped). */
  private async handOver(entry: Entry): Promise<void> {
    if (entry.releasing) return entry.stopping ?? undefined;
    const lease = entry.lease;
    entry.releasing = true;
    const done = (async () => {
      await entry.consumer.released().catch(() => undefined);
      if (lease && lease === entry.lease) {
        entry.lease = null;
        lease.revoke();
        await execute(
          this.dataSource.manager,
          releaseLease(lease.name, this.owner, lease.epoch, entry.consumer.progress?.() ?? null),
        ).catch(() => undefined);
      }
    })();
    entry.stopping = done.finally(() => {
      entry.stopping = null;
      entry.releasing = false;
    });
    return entry.stopping;
  }
}
