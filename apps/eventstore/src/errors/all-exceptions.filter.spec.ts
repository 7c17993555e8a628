import type { OrdinalErrorCode } from '@ordinal/contract';
import { OrdinalError } from '@ordinal/pg';
import { OwnershipLostError } from '@ordinal/log';
import { CheckpointMovedError, HandlerFailedError, WaitTimeoutError } from '@ordinal/subscriptions';
import { AllExceptionsFilter } from './all-exceptions.filter.js';

/** A filter whose error log is captured instead of printed. */
function filterWithLog(): { filter: AllExceptionsFilter; logged: string[] } {
  const filter = new AllExceptionsFilter();
  const logged: string[] = [];
  Object.assign(filter, { logger: { error: (line: string) => logged.push(line) } });
  return { filter, logged };
}

describe('AllExceptionsFilter.toResponse', () => {
  it('answers a wait timeout with 503 and Retry-After (it was a 500)', () => {
    // Given a projection that did not reach the index in time
    const { filter, logged } = filterWithLog();
    // When the error reaches the filter
    const { body, headers } = filter.toResponse(new WaitTimeoutError('orders', 42, 5000));
    // Then the client is told to retry later, and no server fault is logged
    expect(body).toMatchObject({
      statusCode: 503,
      error: 'Service Unavailable',
      code: 'wait_timeout',
      message: expect.stringContaining("'orders' did not reach index 42") as unknown,
    });
    expect(headers).toEqual({ 'retry-after': '2' });
    expect(logged).toEqual([]);
  });

  it('answers a lost ownership with 503 and Retry-After: a retry reaches the new owner', () => {
    const { body, headers } = new AllExceptionsFilter().toResponse(
      new OwnershipLostError('orders#1'),
    );
    expect(body).toMatchObject({ statusCode: 503, code: 'ownership_lost' });
    expect(headers).toEqual({ 'retry-after': '2' });
  });

  it('answers a moved checkpoint with 409', () => {
    const { body, headers } = new AllExceptionsFilter().toResponse(
      new CheckpointMovedError('orders'),
    );
    expect(body).toMatchObject({ statusCode: 409, error: 'Conflict', code: 'checkpoint_moved' });
    expect(headers).toEqual({});
  });

  it("answers a failed handler with a logged 500: the service's code is at fault", () => {
    const { filter, logged } = filterWithLog();
    const { body, headers } = filter.toResponse(
      new HandlerFailedError('orders', 7, new Error('boom')),
    );
    expect(body).toMatchObject({ statusCode: 500, code: 'handler_failed' });
    expect(headers).toEqual({});
    expect(logged).toEqual([expect.stringMatching(/^handler_failed: 'orders' failed at index 7/)]);
  });

  // The statuses clients relied on before every code had one: they do not change.
  it.each<[OrdinalErrorCode, number]>([
    ['database_unavailable', 503],
    ['writer_overloaded', 503],
    ['writer_closed', 503],
    ['invalid_message', 400],
    ['idempotency_key_reused', 422],
    ['version_conflict', 409],
    ['snapshot_version_exceeds_stream', 409],
    ['invalid_stream_id', 400],
    ['invalid_version', 400],
    ['aggregate_not_found', 404],
    ['subscription_not_found', 404],
    ['consumer_not_running', 409],
    ['consumer_request_failed', 503],
    ['read_only_replica', 421],
  ])('keeps %s at %i', (code, status) => {
    const { body, headers } = new AllExceptionsFilter().toResponse(new OrdinalError(code, 'm'));
    expect(body).toMatchObject({ statusCode: status, code });
    expect(headers).toEqual(status === 503 ? { 'retry-after': '2' } : {});
  });
});
