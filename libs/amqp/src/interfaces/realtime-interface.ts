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
import type { Lease } from '@ordinal/ownership';

/**
 * How far back a new owner of a realtime interface publishes from the position its previous
 * owner recorded: at most this many indices behind the head, recorded at most this long ago.
 * Beyond either it starts at the head (as after a long outage) and logs the indices skipped.
 */
export const REALTIME_RESUME_MAX_INDICES = 100_000;
export const REALTIME_RESUME_MAX_AGE_MS = 60_000;

/**
 * A realtime interface: each matching message committed while it runs is published once
 * to `<name>.sink`, persistent and confirmed; no bookmark, no catch-up. A run starts at the
 * head of the log; after an outage the new run starts at the then head, and the interface
 * logs the range of indices it may not have published meanwhile.
 *
 * Across owners (several servers, consumer ownership): the owner records how far it has
 * published (every index up to `published` was confirmed by the broker or did not match) on
 * its lease row with each heartbeat and at hand-over, and the next owner publishes from there
 * — a graceful hand-over loses and repeats nothing; after a kill -9 what the old owner
 * published after its last heartbeat (up to one tick) is published again, nothing is lost.
 * Bounded by REALTIME_RESUME_MAX_INDICES and REALTIME_RESUME_MAX_AGE_MS.
 */
export class RealtimeInterface extends PushInterface {
  private position = 0;
  /** The highest index whose publish the broker confirmed (null before any run). */
  private confirmedUpTo: number | null = null;
  private missed = 0;
  /** Where the previous owner left off (taken over with the lease), used by the next run. */
  private resumeFrom: { position: number; ageMs: number } | null = null;
  private feed: ReturnType<LiveRouter['open']> | null = null;
  private window: ConfirmWindow | null = null;
  /** A message came out of the feed and is not in the confirm window yet. */
  private handling = false;

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

  protected override taken(lease: Lease): void {
    const previous = lease.previous?.progress as { published?: unknown } | undefined;
    const position = typeof previous?.published === 'number' ? previous.published : null;
    this.resumeFrom = position === null ? null : { position, ageMs: lease.previous!.ageMs };
    // What this process published under an earlier lease is not where the interface stands now.
    this.confirmedUpTo = null;
  }

  /** Every index up to here was published (confirmed) or did not match; null before a run. */
  private get published(): number | null {
    if (this.confirmedUpTo === null) return null;
    const feed = this.feed;
    if (feed && !this.handling && this.window?.pending === 0 && feed.position > this.confirmedUpTo)
      return feed.position;
    return this.confirmedUpTo;
  }

  override progress(): unknown {
    // Before its first run (the broker down, say) it passes on where the previous owner left off.
    return {
      status: this.status(),
      published: this.published ?? this.resumeFrom?.position ?? null,
    };
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
    channel.on('error', (error: Error) =>
      this.logger.warn(`Interface ${name} publish channel error: ${error.message}`),
    );
    channel.on('return', () =>
      window.fail(new Error(`a delivery could not be routed to ${sink}; declaring it again`)),
    );
    let feed: ReturnType<LiveRouter['open']> | null = null;
    const stop = () => {
      feed?.close();
      window.fail(new Error('the broker connection was lost'));
    };
    signal.addEventListener('abort', stop, { once: true });
    try {
      await declareQueue(channel, sink, baseArguments(this.options.quorumQueues));
      const head = await this.reader.safeHead();
      const resume = this.resumeFrom;
      this.resumeFrom = null;
      if (this.confirmedUpTo === null && resume !== null && resume.position < head) {
        if (
          head - resume.position <= REALTIME_RESUME_MAX_INDICES &&
          resume.ageMs <= REALTIME_RESUME_MAX_AGE_MS
        ) {
          // Taken over: publish from where the previous owner left off.
          this.confirmedUpTo = resume.position;
          this.logger.log(
            `Interface [realtime] '${name}' taken over: publishing from index ${resume.position + 1} (where the previous owner left off)`,
          );
        } else {
          this.missed += head - resume.position;
          this.logger.warn(
            `Interface [realtime] '${name}' taken over ${Math.round(resume.ageMs)} ms after its previous owner recorded index ${resume.position}: too far back (more than ${REALTIME_RESUME_MAX_INDICES} indices or ${REALTIME_RESUME_MAX_AGE_MS} ms); indices ${resume.position + 1}..${head} are not published`,
          );
        }
      }
      if (this.confirmedUpTo !== null && head > this.confirmedUpTo && resume === null) {
        this.missed += head - this.confirmedUpTo;
        this.logger.warn(
          `Interface [realtime] '${name}' did not publish the matching messages among indices ${this.confirmedUpTo + 1}..${head} (committed while it could not publish); realtime interfaces do not resend`,
        );
      }
      const start =
        this.confirmedUpTo !== null && resume !== null && this.confirmedUpTo < head
          ? this.confirmedUpTo
          : head;
      this.confirmedUpTo = start;
      this.position = start;
      feed = this.router.open({ fromIndex: start + 1, types: this.config.includeTypes });
      this.feed = feed;
      this.window = window;
      channel.on('close', () => feed?.close());
      if (signal.aborted) feed.close();
      this.logger.log(
        `Interface [realtime] '${name}' started at ${start === head ? `head ${head}` : `index ${start} (head ${head})`}`,
      );
      this.state = 'live';
      this.healthy();
      for await (const message of feed) {
        this.handling = true;
        if (message.late) {
          // A late arrival among positions already passed: published once, marked late.
          this.ensureOwned();
          await window.publish(
            sink,
            deliveryBody(message),
            deliveryProperties(message, null),
            () => this.counters.published++,
          );
          this.counters.late++;
          this.handling = false;
          continue;
        }
        const index = message.id;
        this.ensureOwned();
        await window.publish(sink, deliveryBody(message), deliveryProperties(message, null), () => {
          this.counters.published++;
          if (index > (this.confirmedUpTo ?? 0)) this.confirmedUpTo = index;
        });
        this.position = index;
        this.handling = false;
      }
      throw new Error(signal.aborted ? 'stopped' : 'the feed or the channel closed');
    } finally {
      signal.removeEventListener('abort', stop);
      feed?.close();
      await window.settle(2000).catch(() => undefined);
      // Everything the feed passed (matching or not) and the broker confirmed counts as handled
      // (not a message taken from the feed whose publish failed).
      if (
        feed &&
        !this.handling &&
        window.pending === 0 &&
        feed.position > (this.confirmedUpTo ?? 0)
      )
        this.confirmedUpTo = feed.position;
      this.feed = null;
      this.window = null;
      this.handling = false;
      await channel.close().catch(() => undefined);
      if (this.state !== 'stopped') this.state = 'disconnected';
    }
  }
}
