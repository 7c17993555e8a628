import { INVALID_SPAN_CONTEXT, trace } from '@opentelemetry/api';
import { LogFullError, VersionConflictError } from '../errors/index.js';
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

  it('refuses whole an append that would pass 2^53 − 1, and still gives the others their place', () => {
    // Given a head two below the last exact index, and a repeat of a key stored at the top
    const top = Number.MAX_SAFE_INTEGER;
    const original = { id: top, idempotencyKey: 'k1' } as StoredMessage;
    // When a flush holds an append of three, one of one, one of two, and one that only repeats
    const plan = planFlush(
      [
        pending({
          messages: [
            { messageType: 'A', body: { n: 1 } },
            { messageType: 'A', body: { n: 2 } },
            { messageType: 'A', body: { n: 3 } },
          ],
        }),
        pending({ messages: [{ messageType: 'B', body: {} }] }),
        pending({
          messages: [
            { messageType: 'C', body: { n: 1 } },
            { messageType: 'C', body: { n: 2 } },
          ],
        }),
        pending({ messages: [{ messageType: 'A', body: { n: 1 }, idempotencyKey: 'k1' }] }),
      ],
      state({ head: top - 2, repeats: new Map([['k1', original]]) }),
      new DuplicateWindow(0),
    );
    // Then the appends that would pass it fail with log_full and leave no row; the rest fit
    expect(plan.outcomes.map((o) => (o.ok ? 'ok' : (o.error as LogFullError).code))).toEqual([
      'log_full',
      'ok',
      'log_full',
      'ok',
    ]);
    expect(plan.rows.index).toEqual([top - 1]);
    expect(plan.created.map((m) => m.messageType)).toEqual(['B']);
    expect(plan.head).toBe(top - 1);
    const repeat = plan.outcomes[3];
    expect(repeat.ok && repeat.entries).toEqual([{ status: 'repeat', message: original }]);
  });
});
