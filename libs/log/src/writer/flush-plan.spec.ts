import { INVALID_SPAN_CONTEXT, trace } from '@opentelemetry/api';
import { VersionConflictError } from '../errors/index.js';
import type { AppendRequest, StoredMessage } from '../message.js';
import { DuplicateWindow } from './duplicate-window.js';
import { planFlush, type WriteState } from './flush-plan.js';
import { prepareMessage, type PendingAppend } from './pending-append.js';

const pending = (request: AppendRequest): PendingAppend => ({
  request,
  prepared: request.messages.map((m) => prepareMessage(m)),
  bytes: 0,
  span: trace.wrapSpanContext(INVALID_SPAN_CONTEXT),
  resolve: () => undefined,
  reject: () => undefined,
});
const state = (over: Partial<WriteState> = {}): WriteState => ({
  head: 10,
  now: '2026-01-01T00:00:00.000Z',
  repeats: new Map(),
  streams: new Map(),
  ...over,
});

describe('planFlush', () => {
  it('assigns contiguous indices after the head, in queue order', () => {
    const plan = planFlush(
      [
        pending({
          messages: [
            { messageType: 'A', body: { a: 1 } },
            { messageType: 'B', body: { b: 1 } },
          ],
        }),
        pending({ messages: [{ messageType: 'C', body: [1] }] }),
      ],
      state(),
      new DuplicateWindow(0),
    );
    expect(plan.rows.index).toEqual([11, 12, 13]);
    expect(plan.head).toBe(13);
    expect(plan.outcomes.map((o) => o.ok)).toEqual([true, true]);
  });

  it('rejects only the conflicting stream append; its neighbours still get indices', () => {
    const plan = planFlush(
      [
        pending({
          messages: [{ messageType: 'X', body: {} }],
          stream: { streamId: 'order-1', expectedVersion: 0 },
        }),
        pending({
          messages: [{ messageType: 'Y', body: {} }],
          stream: { streamId: 'order-1', expectedVersion: 0 },
        }),
        pending({
          messages: [{ messageType: 'Z', body: {} }],
          stream: { streamId: 'order-1', expectedVersion: 1 },
        }),
      ],
      state(),
      new DuplicateWindow(0),
    );
    expect(plan.outcomes[0].ok).toBe(true);
    const second = plan.outcomes[1];
    expect(second.ok).toBe(false);
    expect(!second.ok && second.error).toBeInstanceOf(VersionConflictError);
    expect(plan.rows.streamVersion).toEqual([1, 2]);
    expect(plan.rows.category).toEqual(['order', 'order']);
    expect(plan.streamHeads).toEqual({ streamId: ['order-1'], version: [2] });
  });

  it('returns the stored original for a repeated idempotency key, inside the batch too', () => {
    const original = { id: 3, idempotencyKey: 'k1' } as StoredMessage;
    const plan = planFlush(
      [
        pending({ messages: [{ messageType: 'A', body: { n: 1 }, idempotencyKey: 'k1' }] }),
        pending({ messages: [{ messageType: 'A', body: { n: 2 }, idempotencyKey: 'k2' }] }),
        pending({ messages: [{ messageType: 'A', body: { n: 3 }, idempotencyKey: 'k2' }] }),
      ],
      state({ repeats: new Map([['k1', original]]) }),
      new DuplicateWindow(0),
    );
    const [first, second, third] = plan.outcomes.map((o) => (o.ok ? o.entries[0] : null));
    expect(first).toEqual({ status: 'repeat', message: original });
    expect(second?.status).toBe('created');
    expect(third).toEqual({
      status: 'repeat',
      message: second?.status === 'created' ? second.message : null,
    });
    expect(plan.rows.index).toEqual([11]);
  });

  it('skips window duplicates, also between two appends of one batch', () => {
    const window = new DuplicateWindow(10);
    window.load([prepareMessage({ messageType: 'A', body: { old: true } }).hash]);
    const plan = planFlush(
      [
        pending({ messages: [{ messageType: 'A', body: { old: true } }] }),
        pending({ messages: [{ messageType: 'A', body: { fresh: 1 } }] }),
        pending({ messages: [{ messageType: 'A', body: { fresh: 1 } }] }),
        pending({
          messages: [{ messageType: 'A', body: { fresh: 1 } }],
          skipDuplicateWindow: true,
        }),
      ],
      state(),
      window,
    );
    expect(plan.outcomes.map((o) => (o.ok ? o.entries[0].status : 'error'))).toEqual([
      'duplicate',
      'created',
      'duplicate',
      'created',
    ]);
    expect(plan.windowHashes).toHaveLength(1);
  });
});
