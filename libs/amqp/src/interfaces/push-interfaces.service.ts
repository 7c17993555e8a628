import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { LiveRouter, LogReader } from '@ordinal/log';
import { ConsumerOwnership } from '@ordinal/ownership';
import { AMQP_MODULE_OPTIONS } from '../amqp.module-definition.js';
import type { ResolvedAmqpOptions } from '../amqp-options.js';
import { AmqpConnection } from '../connection/amqp-connection.service.js';
import { BookmarkStore } from '../bookmarks/bookmark-store.service.js';
import { parseInterfaces } from './interface-config.js';
import type { InterfaceStatus } from './interface-status.js';
import type { PushInterface } from './push-interface.js';
import { RealtimeInterface } from './realtime-interface.js';
import { ReplayableInterface } from './replayable-interface.js';

/** The process that owns an interface, and what it last recorded of it (with its heartbeat). */
export interface InterfaceOwner {
  /** `host:pid:random`, as in `consumer_leases.owner`. */
  id: string;
  pid: number | null;
  host: string | null;
  /** Milliseconds since its last heartbeat renewed the lease. */
  heartbeatAgeMs: number | null;
  /** Whether that process is this one. */
  self: boolean;
  /** The interface's state and position where it runs (as of that heartbeat). */
  state: string | null;
  position: number | null;
}

/** An interface's status with its lag behind the head of the log. */
export interface InterfaceReport extends InterfaceStatus {
  /** The head of the log when the report was made. */
  head: number;
  /** Replayable: head − bookmark (what a restart would resend at most); realtime: head − position. */
  lag: number;
  /** The live process publishing it (null: none right now). */
  owner: InterfaceOwner | null;
  /** Whether this process has it configured (the others are known from the database). */
  local: boolean;
}

/** The configured push interfaces: builds them, starts them, reports on them. */
@Injectable()
export class PushInterfaces implements BeforeApplicationShutdown {
  private readonly logger = new Logger(PushInterfaces.name);
  private readonly options: ResolvedAmqpOptions;
  private readonly interfaces: PushInterface[];

  constructor(
    amqp: AmqpConnection,
    router: LiveRouter,
    private readonly reader: LogReader,
    bookmarks: BookmarkStore,
    @Inject(AMQP_MODULE_OPTIONS) options: ResolvedAmqpOptions,
    private readonly ownership: ConsumerOwnership,
  ) {
    this.options = options;
    this.interfaces = parseInterfaces(this.options.interfaces).map((config) =>
      config.type === 'replayable'
        ? new ReplayableInterface(config, amqp, this.options, router, bookmarks)
        : new RealtimeInterface(config, amqp, this.options, router, reader),
    );
  }

  /**
   * Hands every interface to consumer ownership: each runs (whenever the broker is connected)
   * in the one process holding its lease, the others stand by.
   */
  start(): void {
    for (const iface of this.interfaces) {
      iface.standBy();
      this.ownership.join(iface.name, 'interface', [iface]);
    }
    if (this.interfaces.length > 0)
      this.logger.log(
        `Push interfaces: ${this.interfaces.map((i) => `${i.config.name} (${i.config.type})`).join(', ')}`,
      );
  }

  /** Every interface's status, without touching the database. */
  statuses(): InterfaceStatus[] {
    return this.interfaces.map((i) => i.status());
  }

  /**
   * Every interface any process registered on the database, with its owner (process id,
   * host, heartbeat age, and its state and position there) and its lag behind the current
   * head. One configured here shows this process's own state (`standby` where another server
   * publishes it) with the owner's position and bookmark while it runs elsewhere; one known only
   * from the database shows what its owner last recorded (`unowned` when no live process holds it).
   */
  async reports(): Promise<InterfaceReport[]> {
    const [head, rows] = await Promise.all([
      this.reader.safeHead(),
      this.ownership.consumers('interface').catch(() => []),
    ]);
    const byName = new Map(rows.map((r) => [r.name, r]));
    const reports: InterfaceReport[] = [];
    const report = (
      status: InterfaceStatus,
      row: (typeof rows)[number] | undefined,
      local: boolean,
    ): InterfaceReport => {
      const recorded =
        (row?.progress as { status?: InterfaceStatus } | null | undefined)?.status ?? null;
      const owner: InterfaceOwner | null =
        row?.owner && row.live
          ? {
              id: row.owner,
              pid: row.pid,
              host: row.host,
              heartbeatAgeMs:
                row.heartbeat_age_ms === null ? null : Math.round(row.heartbeat_age_ms),
              self: row.owner === this.ownership.owner,
              state: row.owner === this.ownership.owner ? status.state : (recorded?.state ?? null),
              position:
                row.owner === this.ownership.owner ? status.position : (recorded?.position ?? null),
            }
          : null;
      const elsewhere =
        owner && !owner.self && recorded
          ? {
              position: recorded.position,
              bookmark: recorded.bookmark,
              acknowledged: recorded.acknowledged,
            }
          : {};
      const merged = { ...status, ...elsewhere };
      const lag = Math.max(
        0,
        head - (merged.type === 'replayable' ? (merged.bookmark ?? 0) : merged.position),
      );
      return { ...merged, head, lag, owner, local };
    };
    for (const iface of this.interfaces)
      reports.push(report(iface.status(), byName.get(iface.name), true));
    const here = new Set(this.interfaces.map((i) => i.name));
    for (const row of rows) {
      if (here.has(row.name)) continue;
      const recorded = (row.progress as { status?: InterfaceStatus } | null)?.status;
      // Registered elsewhere and never run yet: nothing is known of it but its name.
      if (!recorded) continue;
      reports.push(
        report(
          { ...recorded, state: row.owner && row.live ? recorded.state : 'unowned' },
          row,
          false,
        ),
      );
    }
    return reports.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Sets a replayable interface's bookmark to `position` and resends everything after it.
   * @returns `not-found` or `not-replayable` when there is no such replayable interface
   */
  async rewind(
    name: string,
    position: number,
  ): Promise<'rewound' | 'not-found' | 'not-replayable'> {
    const iface = this.interfaces.find((i) => i.config.name === name);
    if (!iface) return 'not-found';
    if (!(iface instanceof ReplayableInterface)) return 'not-replayable';
    await iface.rewind(position);
    return 'rewound';
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.interfaces.map((i) => this.ownership.leave(i.name)));
    await Promise.all(this.interfaces.map((i) => i.stop()));
  }
}
