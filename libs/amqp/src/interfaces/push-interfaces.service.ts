import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { LiveRouter, LogReader } from '@ordinal/log';
import { ConsumerOwnership } from '@ordinal/log/internal';
import { AMQP_MODULE_OPTIONS } from '../amqp.module-definition.js';
import type { ResolvedAmqpOptions } from '../amqp-options.js';
import { AmqpConnection } from '../connection/amqp-connection.service.js';
import { BookmarkStore } from '../bookmarks/bookmark-store.service.js';
import { parseInterfaces } from './interface-config.js';
import type { InterfaceStatus } from './interface-status.js';
import type { PushInterface } from './push-interface.js';
import { RealtimeInterface } from './realtime-interface.js';
import { ReplayableInterface } from './replayable-interface.js';

/** An interface's status with its lag behind the head of the log. */
export interface InterfaceReport extends InterfaceStatus {
  /** The head of the log when the report was made. */
  head: number;
  /** Replayable: head − bookmark (what a restart would resend at most); realtime: head − position. */
  lag: number;
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
    if (this.interfaces.length > 0) this.logger.log(`Push interfaces: ${this.interfaces.map((i) => `${i.config.name} (${i.config.type})`).join(', ')}`);
  }

  /** Every interface's status, without touching the database. */
  statuses(): InterfaceStatus[] {
    return this.interfaces.map((i) => i.status());
  }

  /** Every interface's status with its lag behind the current head. */
  async reports(): Promise<InterfaceReport[]> {
    const head = await this.reader.safeHead();
    return this.statuses().map((s) => ({ ...s, head, lag: Math.max(0, head - (s.type === 'replayable' ? (s.bookmark ?? 0) : s.position)) }));
  }

  /**
   * Sets a replayable interface's bookmark to `position` and resends everything after it.
   * @returns `not-found` or `not-replayable` when there is no such replayable interface
   */
  async rewind(name: string, position: number): Promise<'rewound' | 'not-found' | 'not-replayable'> {
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
