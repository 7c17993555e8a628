import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { InvalidMessageError, LogWriter } from '@ordinal/log';
import { AMQP_MODULE_OPTIONS } from '../amqp.module-definition.js';
import type { ResolvedAmqpOptions } from '../amqp-options.js';
import { rejectedQueueOf } from '../amqp.constants.js';
import { AmqpConnection } from '../connection/amqp-connection.service.js';
import { backoffDelay, sleep } from '../connection/backoff.js';
import { QueueMismatchError } from '../errors/index.js';
import { baseArguments, inputQueueArguments } from '../topology/queue-arguments.js';
import { declareQueue } from '../topology/declare-queue.js';
import { DeliveryLedger } from './delivery-ledger.js';
import { parseInputMessage } from './input-message.parser.js';
import { settleSafely } from '../connection/settle-safely.js';
import { deadLetterProperties, type InputRefusal } from './dead-letter-properties.js';

/** Figures of the input consumer, for metrics and status. */
export interface InputConsumerStats {
  queue: string | null;
  consuming: boolean;
  /** Deliveries committed to the log as new messages. */
  stored: number;
  /** Deliveries not stored because the duplicate window remembered their body (acknowledged). */
  duplicates: number;
  /** Deliveries whose idempotency key was stored before (acknowledged; the original stays). */
  repeats: number;
  rejected: number;
  requeued: number;
  inFlight: number;
}

/** One consuming channel and what it still owes the broker. */
interface Session {
  /** A confirm channel: a refused delivery's copy to `<input>.rejected` is confirmed before the original is acknowledged. */
  channel: ConfirmChannel;
  ledger: DeliveryLedger;
  open: boolean;
  consumerTag: string | null;
  ackScheduled: boolean;
}

/**
 * The AMQP input queue. Each delivery is parsed and appended through the LogWriter, which
 * group-commits whatever the prefetch window holds; it is acknowledged only after its append
 * committed, in runs with `ack(allUpTo=true)`. A malformed delivery is copied to
 * `<input>.rejected` with `x-ordinal-error` (code and message) and acknowledged once the broker
 * confirmed the copy; should the copy fail, it is rejected without requeue and the queue's
 * dead-letter policy moves it there (without the reason). A transient
 * failure (database down, writer overloaded) requeues after a back-off that grows while the
 * failures last. A lost channel or connection starts over on the next connection; deliveries
 * it had not acknowledged come again from the broker.
 */
@Injectable()
export class InputConsumer implements BeforeApplicationShutdown {
  private readonly logger = new Logger(InputConsumer.name);
  private readonly options: ResolvedAmqpOptions;
  private session: Session | null = null;
  private stopping = false;
  private readonly abort = new AbortController();
  private failures = 0;
  private backoffUntil = 0;
  private backoffMs = 0;
  private setupAttempt = 0;
  private readonly counters = { stored: 0, duplicates: 0, repeats: 0, rejected: 0, requeued: 0 };
  private stopUp: (() => void) | null = null;
  private opening = false;

  constructor(
    private readonly connection: AmqpConnection,
    private readonly writer: LogWriter,
    @Inject(AMQP_MODULE_OPTIONS) options: ResolvedAmqpOptions,
  ) {
    this.options = options;
  }

  /** Consumes on every connection from now on (no-op when the input queue is off). */
  start(): void {
    if (this.options.inputQueue === false || this.stopUp) return;
    this.stopUp = this.connection.onUp((connection) => void this.open(connection));
  }

  stats(): InputConsumerStats {
    return {
      queue: this.options.inputQueue || null,
      consuming: this.session?.consumerTag != null && this.session.open,
      inFlight: this.session?.ledger.outstanding ?? 0,
      ...this.counters,
    };
  }

  /** Stops consuming, lets appends in flight finish and acknowledges them (bounded wait). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.stopUp?.();
    const session = this.session;
    if (!session?.open) return this.abort.abort();
    if (session.consumerTag)
      await session.channel.cancel(session.consumerTag).catch(() => undefined);
    const deadline = Date.now() + 5000;
    while (session.open && session.ledger.outstanding > 0 && Date.now() < deadline) {
      this.flushAcks(session);
      await sleep(20);
    }
    this.abort.abort();
    this.flushAcks(session);
    session.open = false;
    await session.channel.close().catch(() => undefined);
  }

  private async open(connection: ChannelModel): Promise<void> {
    if (this.opening) return;
    this.opening = true;
    try {
      await this.openChannel(connection);
    } finally {
      this.opening = false;
    }
  }

  private async openChannel(connection: ChannelModel): Promise<void> {
    const queue = this.options.inputQueue as string;
    while (!this.stopping && this.connection.isCurrent(connection)) {
      let channel: ConfirmChannel | null = null;
      try {
        channel = await connection.createConfirmChannel();
        const session: Session = {
          channel,
          ledger: new DeliveryLedger(),
          open: true,
          consumerTag: null,
          ackScheduled: false,
        };
        channel.on('error', (error: Error) =>
          this.logger.warn(`Input channel error: ${error.message}`),
        );
        channel.on('close', () => this.onClosed(session, connection));
        await declareQueue(
          channel,
          rejectedQueueOf(queue),
          baseArguments(this.options.quorumQueues),
        );
        await declareQueue(channel, queue, inputQueueArguments(queue, this.options.quorumQueues));
        await channel.prefetch(this.options.prefetch);
        this.session = session;
        const reply = await channel.consume(queue, (msg) => this.onDelivery(session, msg), {
          noAck: false,
        });
        session.consumerTag = reply.consumerTag;
        this.setupAttempt = 0;
        this.logger.log(
          `Consuming AMQP input queue '${queue}' (prefetch ${this.options.prefetch})`,
        );
        return;
      } catch (error) {
        await channel?.close().catch(() => undefined);
        const delay = backoffDelay(this.setupAttempt++, {
          initialMs: this.options.retryInitialMs,
          maxMs: 60_000,
        });
        if (error instanceof QueueMismatchError)
          this.logger.error(`AMQP input is off: ${error.message}. Retrying in ${delay} ms`);
        else
          this.logger.warn(
            `Cannot consume AMQP input queue '${queue}' (${(error as Error).message}); retrying in ${delay} ms`,
          );
        await sleep(delay, this.abort.signal);
      }
    }
  }

  private onClosed(session: Session, connection: ChannelModel): void {
    if (!session.open) return;
    session.open = false;
    if (this.session === session) this.session = null;
    if (this.stopping) return;
    // The broker closed the channel but the connection lives (e.g. the queue was deleted): open again.
    // When the whole connection went, the next connection opens a channel of its own.
    void sleep(
      backoffDelay(this.setupAttempt++, {
        initialMs: this.options.retryInitialMs,
        maxMs: this.options.retryMaxMs,
      }),
      this.abort.signal,
    ).then(() => {
      if (!this.stopping && this.connection.isCurrent(connection) && !this.session) {
        this.logger.warn('AMQP input channel closed while the connection lives; opening it again');
        return this.open(connection);
      }
    });
  }

  private onDelivery(session: Session, msg: ConsumeMessage | null): void {
    if (msg === null) {
      if (!this.stopping)
        this.logger.warn('The broker cancelled the AMQP input consumer; opening the channel again');
      if (session.open) void session.channel.close().catch(() => undefined);
      return;
    }
    const tag = msg.fields.deliveryTag;
    const parsed = parseInputMessage(
      msg.content,
      msg.properties.headers,
      this.options.inputBodyLimitBytes,
      msg.properties.correlationId,
    );
    session.ledger.add(tag);
    if (!parsed.ok)
      return this.reject(session, msg, { code: 'invalid_message', message: parsed.reason });
    // The delivery's correlation and trace context (none: a new correlation), passed explicitly:
    // the writer stamps them and continues the trace.
    this.writer
      .append({ messages: [parsed.message], correlation: parsed.lineage ?? null, inOrder: true })
      .then(
        ({ entries }) => {
          const entry = entries[0];
          if (entry.status === 'created') this.counters.stored++;
          else if (entry.status === 'duplicate') {
            this.counters.duplicates++;
            this.logger.debug(
              `AMQP input delivery ${tag}${describeMessage(msg)} not stored: its body (content hash ${entry.contentHash}) is inside the duplicate window`,
            );
          } else {
            this.counters.repeats++;
            this.logger.debug(
              `AMQP input delivery ${tag}${describeMessage(msg)} not stored: idempotency key '${entry.message.idempotencyKey}' was stored before at index ${entry.message.id}`,
            );
          }
          this.failures = 0;
          session.ledger.done(tag);
          this.scheduleAck(session);
        },
        (error: unknown) => this.onAppendFailed(session, msg, error),
      );
  }

  /**
   * Refuses a delivery for good: a copy with the reason goes to `<input>.rejected` and the
   * original is acknowledged once the broker confirmed the copy (nothing is lost: until then
   * the original stays unacknowledged, and comes again if the channel goes). If the copy fails,
   * the original is rejected without requeue, and the dead-letter policy moves it.
   */
  private reject(session: Session, msg: ConsumeMessage, refusal: InputRefusal): void {
    const tag = msg.fields.deliveryTag;
    const input = this.options.inputQueue as string;
    this.counters.rejected++;
    this.logger.warn(
      `Rejecting AMQP input delivery ${tag}${describeMessage(msg)} to '${rejectedQueueOf(input)}': ${refusal.message}`,
    );
    if (!session.open) return;
    const fallBack = (error: unknown) => {
      this.logger.warn(
        `Cannot copy AMQP input delivery ${tag} to '${rejectedQueueOf(input)}' (${String(error)}); rejecting it, so the dead-letter policy moves it without x-ordinal-error`,
      );
      session.ledger.settled(tag);
      if (session.open) settleSafely(() => session.channel.reject(msg, false));
      this.scheduleAck(session);
    };
    try {
      session.channel.sendToQueue(
        rejectedQueueOf(input),
        msg.content,
        deadLetterProperties(msg, input, refusal),
        (error: unknown) => {
          if (error) return fallBack(error);
          session.ledger.done(tag);
          this.scheduleAck(session);
        },
      );
    } catch (error) {
      fallBack(error);
    }
  }

  private onAppendFailed(session: Session, msg: ConsumeMessage, error: unknown): void {
    const tag = msg.fields.deliveryTag;
    if (error instanceof InvalidMessageError) {
      this.reject(session, msg, { code: error.code, message: error.message });
      return;
    }
    const delay = this.failureDelay(tag, (error as Error).message);
    void sleep(delay, this.abort.signal).then(() => {
      session.ledger.settled(tag);
      if (session.open) {
        this.counters.requeued++;
        settleSafely(() => session.channel.nack(msg, false, true));
      }
      this.scheduleAck(session);
    });
  }

  /**
   * The wait before requeueing a failed delivery. Failures of one episode (a failed flush fails
   * every append in it) share one back-off step and are requeued together; each new episode
   * while the failure lasts doubles the wait; a success starts over.
   */
  private failureDelay(tag: number, reason: string): number {
    const now = Date.now();
    if (now >= this.backoffUntil) {
      this.backoffMs = backoffDelay(this.failures++, {
        initialMs: this.options.retryInitialMs,
        maxMs: this.options.retryMaxMs,
      });
      this.backoffUntil = now + this.backoffMs;
      this.logger.warn(
        `AMQP input delivery ${tag} and those failing with it not stored (${reason}); requeueing after ${this.backoffMs} ms (attempt ${this.failures})`,
      );
    }
    return Math.max(0, this.backoffUntil - now);
  }

  /** Acknowledges the finished run once per turn of the event loop, not once per delivery. */
  private scheduleAck(session: Session): void {
    if (session.ackScheduled) return;
    session.ackScheduled = true;
    setImmediate(() => {
      session.ackScheduled = false;
      this.flushAcks(session);
    });
  }

  private flushAcks(session: Session): void {
    const upTo = session.ledger.takeAckable();
    if (upTo === null || !session.open) return;
    settleSafely(() =>
      session.channel.ack({ fields: { deliveryTag: upTo } } as ConsumeMessage, true),
    );
  }
}

function describeMessage(msg: ConsumeMessage): string {
  const id = msg.properties.messageId as string | undefined;
  return id ? ` (message id ${String(id)})` : '';
}
