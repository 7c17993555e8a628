import { rejectedQueueOf } from '../amqp.constants.js';

/** Arguments every queue of the server is declared with: quorum on request. */
export function baseArguments(quorum: boolean): Record<string, unknown> {
  return quorum ? { 'x-queue-type': 'quorum' } : {};
}

/**
 * Arguments of the input queue: the dead-letter policy that moves rejected deliveries to
 * `<input>.rejected` through the default exchange. Fixed at declaration.
 */
export function inputQueueArguments(inputQueue: string, quorum: boolean): Record<string, unknown> {
  return {
    ...baseArguments(quorum),
    'x-dead-letter-exchange': '',
    'x-dead-letter-routing-key': rejectedQueueOf(inputQueue),
  };
}
