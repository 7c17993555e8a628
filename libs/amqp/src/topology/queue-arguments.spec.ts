import { baseArguments, inputQueueArguments } from './queue-arguments.js';

describe('queue arguments', () => {
  it('dead-letters the input queue into <input>.rejected through the default exchange', () => {
    // Given a classic input queue
    // When its arguments are built
    const args = inputQueueArguments('orders.input', false);
    // Then rejected deliveries go to orders.input.rejected
    expect(args).toEqual({
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': 'orders.input.rejected',
    });
  });

  it('asks for quorum queues only when configured', () => {
    // Given both settings
    // When the arguments are built
    // Then only the quorum one carries x-queue-type
    expect(baseArguments(false)).toEqual({});
    expect(inputQueueArguments('q', true)['x-queue-type']).toBe('quorum');
  });
});
