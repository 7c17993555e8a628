import { INVALID_SPAN_CONTEXT, trace } from '@opentelemetry/api';
import {
  LogFullError,
  StreamDeletedError,
  TenantDeletedError,
  VersionConflictError,
} from '../errors/index.js';
import type { AppendRequest, ExpectedVersion, StoredMessage } from '../message.js';
import { DuplicateWindow } from './duplicate-window.js';
import { planFlush, type WriteState } from './flush-plan.js';
import { prepareMessage, resendKeyOf, type PendingAppend } from './pending-append.js';

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

  it('refuses the appends of a deleted tenant, and only those', () => {
    const plan = planFlush(
      [
        pending({ tenant: 'acme', messages: [{ messageType: 'A', body: {} }] }),
        pending({ tenant: 'globex', messages: [{ messageType: 'B', body: {} }] }),
        pending({ messages: [{ messageType: 'C', body: {} }] }),
        pending({
          tenant: 'acme',
          messages: [{ messageType: 'D', body: {} }],
          stream: { streamId: 'acme/order-1', expectedVersion: 'any' },
        }),
      ],
      state({ deletedTenants: new Set(['acme']) }),
      new DuplicateWindow(0),
    );
    expect(plan.outcomes.map((o) => (o.ok ? 'ok' : o.error))).toEqual([
      new TenantDeletedError('acme'),
      'ok',
      'ok',
      new TenantDeletedError('acme'),
    ]);
    expect(plan.rows.index).toEqual([11, 12]);
    expect(plan.streamHeads.streamId).toEqual([]);
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
    expect(plan.streamHeads).toEqual({ streamId: ['order-1'], version: [2], prior: [0] });
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
    window.load([resendKeyOf(prepareMessage({ messageType: 'A', body: { old: true } }))]);
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

  it('once the window has closed, stores a resend, records nothing and takes no resend key', () => {
    // Given a window of 1 that remembered a message and has since taken its one message
    const window = new DuplicateWindow(1);
    const old = { messageType: 'A', body: { old: true } };
    window.load([resendKeyOf(prepareMessage(old))]);
    window.record(['another']);
    expect(window.isOpen()).toBe(false);
    // When the remembered message is sent again
    const resend = pending({ messages: [old] });
    const plan = planFlush([resend], state(), window);
    // Then it is stored, the plan has nothing for the window, and no key was computed for it
    expect(plan.outcomes.map((o) => (o.ok ? o.entries[0].status : 'error'))).toEqual(['created']);
    expect(plan.windowHashes).toEqual([]);
    expect(resend.prepared[0].resendKey).toBeUndefined();
  });

  it('takes a resend for the same type, user, content and metadata; anything else is a new event', () => {
    // Given a window that remembers one message
    const window = new DuplicateWindow(10);
    const sent = { messageType: 'BookReturned', userId: 'alice', body: { bookId: 'b-1' } };
    window.load([resendKeyOf(prepareMessage({ ...sent, metadata: { desk: 1 } }))]);
    // When the same body comes with another type, user or metadata, with a key, and as a resend
    const plan = planFlush(
      [
        pending({ messages: [{ ...sent, messageType: 'BookLost' }] }),
        pending({ messages: [{ ...sent, userId: 'bob' }] }),
        pending({ messages: [{ ...sent, metadata: { desk: 2 } }] }),
        pending({ messages: [{ ...sent, metadata: { desk: 1 }, idempotencyKey: 'k-1' }] }),
        pending({ messages: [{ ...sent, metadata: { desk: 1 } }] }),
      ],
      state(),
      window,
    );
    // Then only the resend is a duplicate
    expect(plan.outcomes.map((o) => (o.ok ? o.entries[0].status : 'error'))).toEqual([
      'created',
      'created',
      'created',
      'created',
      'duplicate',
    ]);
  });

  it('stores two messages of one batch with the same body and other types', () => {
    const plan = planFlush(
      [
        pending({
          messages: [
            { messageType: 'ShelfChecked', body: { shelf: 7 } },
            { messageType: 'ShelfCleaned', body: { shelf: 7 } },
            { messageType: 'ShelfCleaned', body: { shelf: 7 } },
          ],
        }),
      ],
      state(),
      new DuplicateWindow(10),
    );
    expect(plan.outcomes[0].ok && plan.outcomes[0].entries.map((e) => e.status)).toEqual([
      'created',
      'created',
      'duplicate',
    ]);
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

describe('planFlush: stream states (docs/lifecycle.md)', () => {
  const deleted = { version: 3, state: 'deleted' as const, deletedThrough: 3 };
  const append = (expectedVersion: ExpectedVersion, n = 1) =>
    pending({
      stream: { streamId: 's-1', expectedVersion },
      messages: Array.from({ length: n }, (_, i) => ({ messageType: 'E', body: { i } })),
    });

  it('re-creates a soft-deleted stream at lastVersion + 1 with no_stream, and a second no_stream in the same flush conflicts', () => {
    // Given a stream deleted at version 3
    const plan = planFlush(
      [append('no_stream', 2), append('no_stream')],
      state({ streams: new Map([['s-1', deleted]]) }),
      new DuplicateWindow(0),
    );
    // Then the first append takes versions 4 and 5 and makes it live again
    expect(plan.outcomes[0]).toMatchObject({ ok: true, streamVersion: 5 });
    expect(plan.rows.streamVersion).toEqual([4, 5]);
    expect(plan.stateChanges).toEqual({ streamId: ['s-1'], state: ['live'], deletedThrough: [3] });
    // And the second is a conflict at the new version
    const second = plan.outcomes[1];
    expect(second.ok).toBe(false);
    expect(!second.ok && second.error).toBeInstanceOf(VersionConflictError);
    expect(!second.ok && (second.error as VersionConflictError).current).toBe(5);
  });

  it('refuses stream_exists and exact versions on a soft-deleted stream, everything on a tombstoned one', () => {
    const tombstoned = { version: 3, state: 'tombstoned' as const, deletedThrough: 3 };
    const outcomes = (head: typeof deleted | typeof tombstoned) =>
      planFlush(
        [append('stream_exists'), append(3), append('any')],
        state({ streams: new Map([['s-1', head]]) }),
        new DuplicateWindow(0),
      ).outcomes.map((o) => (o.ok ? 'ok' : (o.error as StreamDeletedError).code));
    expect(outcomes(deleted)).toEqual(['stream_deleted', 'stream_deleted', 'ok']);
    expect(outcomes(tombstoned)).toEqual([
      'stream_tombstoned',
      'stream_tombstoned',
      'stream_tombstoned',
    ]);
  });

  it('a delete stores its marker outside the stream and records the state', () => {
    const plan = planFlush(
      [
        pending({
          stream: { streamId: 's-1', expectedVersion: 2 },
          delete: 'tombstone',
          messages: [{ messageType: '$stream-deleted', body: { streamId: 's-1' } }],
        }),
      ],
      state({ streams: new Map([['s-1', { version: 2, state: 'live', deletedThrough: 0 }]]) }),
      new DuplicateWindow(0),
    );
    expect(plan.rows.streamId).toEqual([null]);
    expect(plan.streamHeads.streamId).toEqual([]);
    expect(plan.stateChanges).toEqual({
      streamId: ['s-1'],
      state: ['tombstoned'],
      deletedThrough: [2],
    });
  });
});
