import { InvalidConsumerGroupError } from './errors/index.js';
import type { ConsumerGroupDeclaration } from './groups/group-definition.js';
import { resolveSubscriptionsOptions } from './subscriptions-options.js';

describe('resolveSubscriptionsOptions', () => {
  it('refuses a bad consumer group declaration where the options are read, naming the group and the field, as PUT would', () => {
    // (read when the module's providers are made: before anything of the application starts)
    const typo = {
      name: 'typo',
      source: { all: true },
      ackTimeoutMs: '5s',
    } as unknown as ConsumerGroupDeclaration;
    const refused = (() => {
      try {
        resolveSubscriptionsOptions({ consumerGroups: [typo] });
        return new Error('taken');
      } catch (error) {
        return error as Error;
      }
    })();
    expect(refused).toBeInstanceOf(InvalidConsumerGroupError);
    expect(refused.message).toMatch(
      /^Consumer group 'typo' of the options \(subscriptions\.consumerGroups\): ackTimeoutMs must be/,
    );
  });

  it('takes good declarations as they are', () => {
    const good = { name: 'ok', source: { category: 'order' }, maxInFlight: 5 };
    expect(resolveSubscriptionsOptions({ consumerGroups: [good] }).consumerGroups).toEqual([good]);
  });
});
