import type { GroupDelivery } from '@ordinal/contract';
import { ConsumerGroupMember } from './consumer-group.js';
import { OrdinalHttpError } from './ordinal-http.error.js';

/** A requester whose answers the test gives by hand, one pending request at a time per call. */
function fakeServer() {
  const calls: Array<{
    route: string;
    body: Record<string, unknown>;
    answer: (body: unknown) => void;
    fail: (error: unknown) => void;
  }> = [];
  let arrived: (() => void) | null = null;
  return {
    calls,
    requester: {
      request<T>(_method: string, path: string, body?: unknown) {
        return new Promise<{ status: number; body: T }>((resolve, reject) => {
          calls.push({
            route: path.split('/').pop()!,
            body: body as Record<string, unknown>,
            answer: (answer) => resolve({ status: 200, body: answer as T }),
            fail: reject,
          });
          arrived?.();
        });
      },
    },
    /** Resolves once `n` requests were made in all. */
    async requests(n: number) {
      while (calls.length < n) await new Promise<void>((resolve) => (arrived = resolve));
    },
  };
}

const event = (index: number) => ({ index, deliveryAttempt: 1 }) as unknown as GroupDelivery;
const batch = (epoch: number, ...indices: number[]) => ({
  memberId: 'm',
  epoch,
  events: indices.map(event),
});

describe('ConsumerGroupMember', () => {
  it('fetches the next batch while the last batch’s ack is on its way, and sends acks one batch after another', async () => {
    // Given a member whose first fetch brought two events
    const server = fakeServer();
    const acknowledged: number[][] = [];
    const member = new ConsumerGroupMember(server.requester, {
      group: 'g',
      memberId: 'm',
      heartbeatMs: 60_000,
      handler: () => undefined,
      onAcknowledged: (indices) => acknowledged.push(indices),
    });
    await server.requests(1);
    server.calls[0].answer(batch(1, 1, 2));
    // When it handled them: its ack and its next fetch are both out before the ack is answered
    await server.requests(3);
    expect(server.calls.map((c) => c.route)).toEqual(['fetch', 'ack', 'fetch']);
    expect(server.calls[1].body).toEqual({ memberId: 'm', epoch: 1, indices: [1, 2] });
    // And the next batch's ack waits for the first one's answer
    server.calls[2].answer(batch(1, 3));
    await new Promise((resolve) => setImmediate(resolve));
    expect(server.calls).toHaveLength(3);
    server.calls[1].answer({ acknowledged: [1, 2], notHeld: [], checkpoint: 2 });
    await server.requests(5);
    expect(server.calls.slice(3).map((c) => c.route)).toEqual(['ack', 'fetch']);
    expect(server.calls[3].body).toEqual({ memberId: 'm', epoch: 1, indices: [3] });
    // And stopping waits for the last ack
    const stopped = member.stop();
    server.calls[4].answer(batch(1));
    let done = false;
    void stopped.then(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    server.calls[3].answer({ acknowledged: [3], notHeld: [], checkpoint: 3 });
    await stopped;
    expect(acknowledged).toEqual([[1, 2], [3]]);
  });

  it('drops a batch whose ack finds the lease lost, says so, and goes on with the next batch', async () => {
    const server = fakeServer();
    const errors: unknown[] = [];
    const member = new ConsumerGroupMember(server.requester, {
      group: 'g',
      memberId: 'm',
      heartbeatMs: 60_000,
      handler: () => undefined,
      onError: (error) => errors.push(error),
    });
    await server.requests(1);
    server.calls[0].answer(batch(1, 1));
    await server.requests(3);
    server.calls[1].fail(
      new OrdinalHttpError(409, { code: 'member_lease_lost', message: 'lost' }, 'lost'),
    );
    server.calls[2].answer(batch(2, 4));
    await server.requests(5);
    expect(server.calls[3].body).toEqual({ memberId: 'm', epoch: 2, indices: [4] });
    expect(errors).toHaveLength(1);
    expect((errors[0] as OrdinalHttpError).code).toBe('member_lease_lost');
    const stopped = member.stop();
    server.calls[3].answer({ acknowledged: [4], notHeld: [], checkpoint: 4 });
    server.calls[4].answer(batch(2));
    await stopped;
  });
});
