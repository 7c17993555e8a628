import type { ChannelModel } from 'amqplib';
import type { LiveRouter, LogReader } from '@ordinal/log';
import { sinkQueueOf } from '../amqp.constants.js';
import type { AmqpConnection } from '../connection/amqp-connection.service.js';
import type { ResolvedAmqpOptions } from '../amqp-options.js';
import { baseArguments } from '../topology/queue-arguments.js';
import { declareQueue } from '../topology/declare-queue.js';
import { ConfirmWindow } from './confirm-window.js';
import { deliveryBody, deliveryProperties } from './interface-delivery.js';
import type { ResolvedInterfaceConfig } from './interface-config.js';
import type { InterfaceStatus } from './interface-status.js';
import { PushInterface } from './push-interface.js';

/**
 * A realtime interface: each matching message committed while it runs is published once
 * to `<name>.sink`, persistent and confirmed; no bookmark, no catch-up. A run starts at the
 * head of the log; after an outage the new run starts at the then head, and the interface
 * logs the range of indices it may not have published meanwhile.
 */
export class RealtimeInterface extends PushInterface {
  private position = 0;
  /** The highest index whose publish the broker confirmed (null before any run). */
  private confirmedUpTo: number | null = null;
  private missed = 0;

  constructor(
    config: ResolvedInterfaceConfig,
    amqp: AmqpConnection,
    options: ResolvedAmqpOptions,
    private readonly router: LiveRouter,
    private readonly reader: LogReader,
  ) {
    super(config, amqp, options);
  }

  /** Indices between runs that were committed while no run was publishing (they may include no match). */
  get missedIndices(): number {
    return this.missed;
  }

  status(): InterfaceStatus {
    return {
      name: this.config.name,
      type: 'realtime',
      state: this.state,
      includeTypes: this.config.includeTypes,
      sinkQueue: sinkQueueOf(this.config.name),
      ackQueue: null,
      bookmark: null,
      acknowledged: null,
      position: this.position,
      correlationUuid: null,
      catchUp: null,
      lastError: this.lastError,
      ...this.counters,
    };
  }

  protected async run(connection: ChannelModel, signal: AbortSignal): Promise<void> {
    const name = this.config.name;
    const sink = sinkQueueOf(name);
    const channel = await connection.createConfirmChannel();
    const window = new ConfirmWindow(channel, this.options.confirmWindow, name);
    channel.on('error', (error: Error) => this.logger.warn(`Interface ${name} publish channel error: ${error.message}`));
    channel.on('return', () => window.fail(new Error(`a delivery could not be routed to ${sink}; declaring it again`)));
    let feed: ReturnType<LiveRouter['open']> | null = null;
    const stop = () => {
      feed?.close();
      window.fail(new Error('the broker connection was lost'));
    };
    signal.addEventListener('abort', stop, { once: true });
    try {
      await declareQueue(channel, sink, baseArguments(this.options.quorumQueues));
      const head = await this.reader.safeHead();
      if (this.confirmedUpTo !== null && head > this.confirmedUpTo) {
        this.missed += head - this.confirmedUpTo;
        this.logger.warn(
          `Interface [realtime] '${name}' did not publish the matching messages among indices ${this.confirmedUpTo + 1}..${head} (committed while it could not publish); realtime interfaces do not resend`,
        );
      }
      this.confirmedUpTo = head;
      this.position = head;
      feed = this.router.open({ fromIndex: head + 1, types: this.config.includeTypes });
      channel.on('close', () => feed?.close());
      if (signal.aborted) feed.close();
      this.logger.log(`Interface [realtime] '${name}' started at head ${head}`);
      this.state = 'live';
      this.healthy();
      for await (const message of feed) {
        if (message.late) {
          // A late arrival among positions already passed: published once, marked late.
          this.ensureOwned();
          await window.publish(sink, deliveryBody(message), deliveryProperties(message, null), () => this.counters.published++);
          this.counters.late++;
          continue;
        }
        const index = message.id;
        this.ensureOwned();
        await window.publish(sink, deliveryBody(message), deliveryProperties(message, null), () => {
          this.counters.published++;
          if (index > (this.confirmedUpTo ?? 0)) this.confirmedUpTo = index;
        });
        this.position = index;
      }
      throw new Error(signal.aborted ? 'stopped' : 'the feed or the channel closed');
    } finally {
      signal.removeEventListener('abort', stop);
      feed?.close();
      await window.settle(2000).catch(() => undefined);
      // Everything the feed passed (matching or not) and the broker confirmed counts as handled.
      if (feed && window.pending === 0 && feed.position > (this.confirmedUpTo ?? 0)) this.confirmedUpTo = feed.position;
      await channel.close().catch(() => undefined);
      if (this.state !== 'stopped') this.state = 'disconnected';
    }
  }
}
