import type { Channel } from 'amqplib';
import { QueueMismatchError } from '../errors/index.js';

/** AMQP reply code of a declaration whose arguments differ from the existing queue's. */
const PRECONDITION_FAILED = 406;

/**
 * Declares a durable queue with `args`. A queue that exists with other arguments fails with
 * a QueueMismatchError (the broker closes the channel, so the caller opens a new one).
 */
export async function declareQueue(
  channel: Channel,
  queue: string,
  args: Record<string, unknown>,
): Promise<void> {
  try {
    await channel.assertQueue(queue, { durable: true, arguments: args });
  } catch (error) {
    if ((error as { code?: number }).code === PRECONDITION_FAILED)
      throw new QueueMismatchError(queue, args, { cause: error });
    throw error;
  }
}
