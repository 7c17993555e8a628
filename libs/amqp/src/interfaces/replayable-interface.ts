import { randomUUID } from 'node:crypto';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { LiveRouter } from '@ordinal/log';
import { ackQueueOf, sinkQueueOf } from '../amqp.constants.js';
import type { AmqpConnection } from '../connection/amqp-connection.service.js';
import { backoffDelay, sleep } from '../connection/backoff.js';
import type { ResolvedAmqpOptions } from '../amqp-options.js';
import { BookmarkTracker } from '../bookmarks/bookmark-tracker.js';
import type { BookmarkStore } from '../bookmarks/bookmark-store.service.js';
import { baseArguments } from '../topology/queue-arguments.js';
import { declareQueue } from '../topology/declare-queue.js';
import { parseAckMessage } from './ack-message.parser.js';
import { ConfirmWindow } from './confirm-window.js';
import { deliveryBody, deliveryProperties } from './interface-delivery.js';
import type { ResolvedInterfaceConfig } from './interface-config.js';
import type { CatchUpSummary, InterfaceStatus } from './interface-status.js';
import { PushInterface } from './push-interface.js';
import { settleSafely } from '../connection/settle-safely.js';

/** Unacknowledged ack messages the broker may push at once. */
const ACK_PREFETCH = 5000;

/**
 * A replayable interface. Each run takes a fresh serverCorrelationUuid, reads the saved
 * bookmark and opens a router feed after it: the whole log from index 1 for a new
 * interface, then live. Matching messages are published persistent and confirmed to
 * `<name>.sink`; the others are acknowledged on the consumer's behalf. Acks from
 * `<name>.ack` feed the BookmarkTracker, whose whole batches are saved to the database. A
 * new run (after a restart or an outage) resends everything after the saved bookmark.
 */
export class ReplayableInterface extends PushInterface {
  private tracker: BookmarkTracker | null = null;
  private position = 0;
  private catchUp: CatchUpSummary | null = null;
  private saving: Promise<void> | null = null;
  private saveAgain = false;
  private saveFailures = 0;
  private rewinding: Promise<void> | null = null;

  constructor(
    config: ResolvedInterfaceConfig,
    amqp: AmqpConnection,
    options: ResolvedAmqpOptions,
    private readonly router: LiveRouter,
    private readonly bookmarks: BookmarkStore,
  ) {
    super(config, amqp, options);
  }

  status(): InterfaceStatus {
    return {
      name: this.config.name,
      type: 'replayable',
      state: this.state,
      includeTypes: this.config.includeTypes,
      sinkQueue: sinkQueueOf(this.config.name),
      ackQueue: ackQueueOf(this.config.name),
      bookmark: this.tracker?.bookmark ?? null,
      acknowledged: this.tracker?.contiguous ?? null,
      position: this.position,
      correlationUuid: this.tracker?.correlationUuid ?? null,
      catchUp: this.catchUp,
      lastError: this.lastError,
      ...this.counters,
    };
  }

  protected async run(connection: ChannelModel, signal: AbortSignal): Promise<void> {
    const name = this.config.name;
    const sink = sinkQueueOf(name);
    const args = baseArguments(this.options.quorumQueues);
    await this.saving;
    await this.rewinding;
    const { position: start, arrivedSince } = await this.bookmarks.readSaved(name);
    const tracker = new BookmarkTracker(start, this.config.ackBatch, randomUUID(), arrivedSince);
    this.tracker = tracker;
    this.position = start;
    this.catchUp = null;
    const channel = await connection.createConfirmChannel();
    let ackChannel: Channel | null = null;
    const feed = this.router.open({
      fromIndex: start + 1,
      // From what the last run still owed when it saved the bookmark, not from when it saved
      // it: an arrival claimed before the save may not have reached that run's feed yet.
      watchAbandonedBelow: { arrivedSince },
    });
    const window = new ConfirmWindow(channel, this.options.confirmWindow, name);
    const stop = () => {
      feed.close();
      window.fail(
        new Error(
          signal.reason instanceof Error ? signal.reason.message : 'the broker connection was lost',
        ),
      );
    };
    signal.addEventListener('abort', stop, { once: true });
    try {
      channel.on('error', (error: Error) =>
        this.logger.warn(`Interface ${name} publish channel error: ${error.message}`),
      );
      channel.on('close', () => feed.close());
      channel.on('return', () =>
        window.fail(new Error(`a delivery could not be routed to ${sink}; declaring it again`)),
      );
      await declareQueue(channel, sink, args);
      await declareQueue(channel, ackQueueOf(name), args);
      ackChannel = await this.consumeAcks(connection, tracker, () => {
        window.fail(new Error('the ack channel closed'));
        feed.close();
      });
      const head = await feed.headAtOpen;
      this.logger.log(
        `Interface [replayable] '${name}' started from bookmark ${start} up to head ${head} (serverCorrelationUuid ${tracker.correlationUuid})`,
      );
      this.state = head > start ? 'catching-up' : 'live';
      let processed = 0;
      let skipped = 0;
      if (head <= start) this.catchUpDone({ processed, skipped, reachedIndex: start });
      let passed = start;
      for await (const message of feed) {
        if (message.late) {
          // Committed inside a hole this run passed: published once, marked late; the
          // bookmark already moved over its position, so its ack changes nothing.
          if (this.matches(message)) {
            this.ensureOwned();
            await window.publish(
              sink,
              deliveryBody(message),
              deliveryProperties(message, tracker.correlationUuid),
              () => this.counters.published++,
            );
            this.counters.late++;
            // Confirmed before the next message is taken: the feed owes it no more, so what
            // is saved with the bookmark from then on leaves it out (late arrivals are rare).
            await window.settle();
          }
          continue;
        }
        // What the feed owes now covers every position up to this message (it watched those it
        // passed before yielding it), and every late arrival yielded so far is confirmed:
        // saved with any bookmark up to here, a restart misses none of them.
        tracker.owedSince = feed.arrivedSince;
        // Positions the feed passed without a row (rolled back, or abandoned holes) count as handled.
        if (message.id > passed + 1) tracker.skipRange(passed + 1, message.id - 1);
        passed = message.id;
        if (this.matches(message)) {
          tracker.dispatched(message.id);
          this.ensureOwned();
          await window.publish(
            sink,
            deliveryBody(message),
            deliveryProperties(message, tracker.correlationUuid),
            () => this.counters.published++,
          );
          processed++;
        } else {
          tracker.skip(message.id);
          this.counters.skipped++;
          skipped++;
          this.scheduleSave(tracker);
        }
        this.position = message.id;
        if (this.state === 'catching-up' && message.id >= head)
          this.catchUpDone({ processed, skipped, reachedIndex: message.id });
        if (processed % 1000 === 0) this.healthy();
      }
      throw new Error(signal.aborted ? 'stopped' : 'the feed or a channel closed');
    } finally {
      signal.removeEventListener('abort', stop);
      feed.close();
      if (this.state !== 'stopped') this.state = 'disconnected';
      await window.settle(2000).catch(() => undefined);
      await ackChannel?.close().catch(() => undefined);
      await channel.close().catch(() => undefined);
      this.scheduleSave(tracker);
      await this.saving;
    }
  }

  /**
   * Moves the bookmark to `position` (backwards too) and starts a new run from there: the
   * current run ends first (its last save included), so nothing moves the bookmark past the
   * rewind; acks of the old run are stale under the new run's correlation uuid.
   */
  async rewind(position: number): Promise<void> {
    const done = (async () => {
      await this.endRun(`rewound to ${position}`);
      await this.saving;
      await this.bookmarks.set(this.config.name, position);
      this.logger.log(
        `Interface ${this.config.name} rewound: bookmark set to ${position}; resending everything after it`,
      );
    })();
    this.rewinding = done.catch(() => undefined);
    try {
      await done;
    } finally {
      this.rewinding = null;
    }
  }

  private catchUpDone(summary: CatchUpSummary): void {
    this.catchUp = summary;
    this.state = 'live';
    this.healthy();
    this.logger.log(
      `Interface ${this.config.name} catch-up completed: processed ${summary.processed} messages, skipped ${summary.skipped} messages, reached message ID ${summary.reachedIndex}`,
    );
  }

  /** Consumes `<name>.ack` into the tracker, acknowledging the ack messages in runs. */
  private async consumeAcks(
    connection: ChannelModel,
    tracker: BookmarkTracker,
    onLost: () => void,
  ): Promise<Channel> {
    const channel = await connection.createChannel();
    channel.on('error', (error: Error) =>
      this.logger.warn(`Interface ${this.config.name} ack channel error: ${error.message}`),
    );
    channel.on('close', onLost);
    await channel.prefetch(ACK_PREFETCH);
    let last: ConsumeMessage | null = null;
    let scheduled = false;
    await channel.consume(ackQueueOf(this.config.name), (msg) => {
      if (msg === null) return onLost();
      for (const ack of parseAckMessage(msg.content, msg.properties.headers).acks) {
        if (tracker.ack(ack.index, ack.serverCorrelationUuid) === 'stale')
          this.counters.staleAcks++;
      }
      last = msg;
      if (scheduled) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        const settled = last;
        if (settled) settleSafely(() => channel.ack(settled, true));
        last = null;
        this.scheduleSave(tracker);
      });
    });
    return channel;
  }

  /** Saves the tracker's target when it moved; one write in flight, retried with back-off. */
  private scheduleSave(tracker: BookmarkTracker): void {
    if (this.saving) {
      this.saveAgain = true;
      return;
    }
    const target = tracker.target;
    if (target <= tracker.bookmark) return;
    this.saving = this.bookmarks
      .save(this.config.name, target, tracker.owedSince)
      .then(() => {
        tracker.markSaved(target);
        this.saveFailures = 0;
      })
      .catch(async (error: unknown) => {
        const delay = backoffDelay(this.saveFailures++, {
          initialMs: this.options.retryInitialMs,
          maxMs: this.options.retryMaxMs,
        });
        this.logger.warn(
          `Interface ${this.config.name} cannot save its bookmark ${target} (${(error as Error).message}); retrying in ${delay} ms`,
        );
        if (this.stopSignal.aborted) return;
        await sleep(delay, this.stopSignal);
        this.saveAgain = true;
      })
      .finally(() => {
        this.saving = null;
        if (this.saveAgain) {
          this.saveAgain = false;
          this.scheduleSave(tracker);
        }
      });
  }
}
