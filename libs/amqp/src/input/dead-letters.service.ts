import { Inject, Injectable } from '@nestjs/common';
import type { GetMessage } from 'amqplib';
import { rejectedQueueOf } from '../amqp.constants.js';
import { AMQP_MODULE_OPTIONS } from '../amqp.module-definition.js';
import type { ResolvedAmqpOptions } from '../amqp-options.js';
import { AmqpConnection } from '../connection/amqp-connection.service.js';

/** One dead-lettered input message as the operations routes show it. */
export interface DeadLetter {
  messageType: string | null;
  userId: string | null;
  headers: Record<string, unknown>;
  /** The body as text (it may not be JSON: that is often why it was rejected). */
  body: string;
  /**
   * Why and when it was dead-lettered: the broker's `x-death` header (first entry), or for
   * Ordinal's own copy of a refused delivery its `x-ordinal-error` (reason `rejected`).
   */
  death: { reason: string | null; time: string | null } | null;
}

/** Redrive publishes this many, waits for the broker's confirms, then acks them. */
const REDRIVE_CHUNK = 100;

/**
 * The AMQP input's dead letters (`<input>.rejected`): lists them without removing them, and
 * re-drives them back to the input queue (confirmed publish first, then the ack, so a crash
 * half-way duplicates at most a chunk, never loses one).
 */
@Injectable()
export class DeadLetters {
  constructor(
    @Inject(AMQP_MODULE_OPTIONS) private readonly options: ResolvedAmqpOptions,
    private readonly amqp: AmqpConnection,
  ) {}

  /** The input queue, or null when AMQP input is off (`inputQueue: false`). */
  get inputQueue(): string | null {
    return this.options.inputQueue === false ? null : this.options.inputQueue;
  }

  /** The count and the first `limit` dead letters; they stay in the queue. */
  async list(limit: number): Promise<{ queue: string; count: number; messages: DeadLetter[] }> {
    const queue = rejectedQueueOf(this.requireInput());
    const channel = await this.amqp.connection.createChannel();
    try {
      const { messageCount } = await channel.checkQueue(queue);
      const messages: DeadLetter[] = [];
      while (messages.length < Math.min(limit, messageCount)) {
        const msg = await channel.get(queue, { noAck: false });
        if (msg === false) break;
        messages.push(describe(msg));
      }
      // Closing the channel without acking puts every message back.
      return { queue, count: messageCount, messages };
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /** Moves every dead letter present now back to the input queue; returns how many moved. */
  async redrive(): Promise<{ from: string; to: string; moved: number }> {
    const input = this.requireInput();
    const queue = rejectedQueueOf(input);
    const channel = await this.amqp.connection.createConfirmChannel();
    let moved = 0;
    try {
      // Only what is there now: a message rejected again meanwhile waits for the next redrive.
      const { messageCount } = await channel.checkQueue(queue);
      while (moved < messageCount) {
        let last: GetMessage | null = null;
        let inChunk = 0;
        while (inChunk < REDRIVE_CHUNK && moved + inChunk < messageCount) {
          const msg = await channel.get(queue, { noAck: false });
          if (msg === false) break;
          const {
            'x-death': _death,
            'x-first-death-exchange': _e,
            'x-first-death-queue': _q,
            'x-first-death-reason': _r,
            'x-last-death-exchange': _le,
            'x-last-death-queue': _lq,
            'x-last-death-reason': _lr,
            'x-ordinal-error': _error,
            ...headers
          } = (msg.properties.headers ?? {}) as Record<string, unknown>;
          channel.sendToQueue(input, msg.content, {
            headers,
            persistent: true,
            contentType: msg.properties.contentType as string | undefined,
            messageId: msg.properties.messageId as string | undefined,
          });
          last = msg;
          inChunk++;
        }
        if (!last) break;
        await channel.waitForConfirms();
        channel.ack(last, true);
        moved += inChunk;
      }
      return { from: queue, to: input, moved };
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  private requireInput(): string {
    const input = this.inputQueue;
    if (input === null) throw new AmqpInputOffError();
    return input;
  }
}

/** AMQP input is off (`inputQueue: false`), so there are no dead letters. */
export class AmqpInputOffError extends Error {
  constructor() {
    super(
      'AMQP input is off (AMQP_URL unset or ORDINAL_AMQP_INPUT_QUEUE=off), so there are no dead letters',
    );
  }
}

function header(headers: Record<string, unknown>, name: string): string | null {
  const value = headers[name];
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- AMQP header values are strings, numbers or Buffers: String() gives their text
  return value === undefined || value === null ? null : String(value);
}

function describe(msg: GetMessage): DeadLetter {
  const headers = (msg.properties.headers ?? {}) as Record<string, unknown>;
  const death = (
    headers['x-death'] as Array<{ reason?: string; time?: { value?: number } | Date }> | undefined
  )?.[0];
  const time =
    death?.time instanceof Date
      ? death.time.toISOString()
      : typeof death?.time?.value === 'number'
        ? new Date(death.time.value * 1000).toISOString()
        : null;
  // Ordinal's own copy of a refused delivery carries no x-death: its x-ordinal-error says why and when.
  const error = headers['x-ordinal-error'] as { time?: unknown } | undefined;
  const { 'x-death': _d, ...rest } = headers;
  return {
    messageType: header(headers, 'messageType'),
    userId: header(headers, 'userId'),
    headers: rest,
    body: msg.content.toString('utf8'),
    death: death
      ? { reason: death.reason ?? null, time }
      : error
        ? {
            reason: header(headers, 'x-first-death-reason'),
            time: typeof error.time === 'string' ? error.time : null,
          }
        : null,
  };
}
