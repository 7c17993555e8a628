import type { GroupDelivery, GroupFetchResponse, GroupSettleResponse } from '@ordinal/contract';
import { backoffDelay, type BackoffOptions } from './backoff.js';
import { OrdinalHttpError, isRetryable } from './ordinal-http.error.js';

/** How a consumer group member runs (docs/consumer-groups.md). */
export interface ConsumerGroupOptions {
  /** The group's name (defined with `PUT /api/consumer-groups/:group`). */
  group: string;
  /** This member's id; omitted, the server makes one up on the first fetch (see `memberId`). */
  memberId?: string;
  /**
   * Processes one event. Resolves: the event is acknowledged (in one ack per fetched batch).
   * Throws: it is given back (`nack` with `retry`, the error's message as the reason), and the
   * group parks it after `parkAfter` failures. Return `'skip'` or `'park'` to settle it that way.
   */
  handler: (event: GroupDelivery) => Promise<void | 'skip' | 'park'> | void | 'skip' | 'park';
  /** Most events one fetch asks for. @default 100 */
  max?: number;
  /** How long one fetch waits for an event (ms). @default 5000 */
  waitMs?: number;
  /**
   * While the handler works on a batch, the member renews its lease this often (a fetch of 0
   * events), so a slow batch does not get it declared dead. Keep it well under the server's
   * member timeout (ORDINAL_GROUP_MEMBER_TIMEOUT_MS, 10 s by default). @default 2000
   */
  heartbeatMs?: number;
  backoff?: BackoffOptions;
  /** Told which indices the server counted as acknowledged by each ack (it may refuse some: `notHeld`). */
  onAcknowledged?: (indices: number[], notHeld: number[]) => void;
  /** Told about every failed request (it is retried with back-off) and every lost lease. */
  onError?: (error: unknown, attempt: number) => void;
}

/** The member's lease a batch was fetched under. */
interface Lease {
  memberId: string;
  epoch: number;
}

/** The subset of OrdinalClient a member uses. */
interface Requester {
  request<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
}

/**
 * One member of a consumer group: fetches (long poll), runs the handler on each event in the
 * order received, acknowledges what succeeded in one request per batch and gives back what
 * threw; a batch's acks go out while the next batch is fetched. A lost lease (409
 * `member_lease_lost`: this member was declared dead and its events went to others) drops the
 * rest of the batch and fetches again under a new lease. Network
 * errors and 5xx are retried with back-off; a 4xx other than a lost lease stops it (`done`
 * rejects).
 */
export class ConsumerGroupMember {
  private stopped = false;
  private attempt = 0;
  private current: Lease | null = null;
  /**
   * The acks and nacks of the last batch: sent while the next batch is fetched, awaited before
   * the next batch's are sent (so they go in order, one batch's at a time) and before stopping.
   */
  private settling: Promise<void> = Promise.resolve();
  /** An error the last batch's settling could not retry, thrown where it is awaited. */
  private settleFailure: { error: unknown } | null = null;
  /** Resolves once stopped; rejects on an error it cannot retry. */
  readonly done: Promise<void>;

  constructor(
    private readonly client: Requester,
    private readonly options: ConsumerGroupOptions,
  ) {
    this.done = this.run();
  }

  /** This member's id (known after the first fetch when the options gave none). */
  get memberId(): string | undefined {
    return this.current?.memberId ?? this.options.memberId;
  }

  /** The lease epoch the member holds now. */
  get epoch(): number | undefined {
    return this.current?.epoch;
  }

  /** Stops after the batch in hand (its acks are sent); resolves when stopped. */
  stop(): Promise<void> {
    this.stopped = true;
    return this.done;
  }

  private get path(): string {
    return `/api/consumer-groups/${encodeURIComponent(this.options.group)}`;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const { body } = await this.client.request<GroupFetchResponse>(
          'POST',
          `${this.path}/fetch`,
          {
            ...(this.memberId === undefined ? {} : { memberId: this.memberId }),
            max: this.options.max ?? 100,
            waitMs: this.options.waitMs ?? 5000,
          },
        );
        this.current = { memberId: body.memberId, epoch: body.epoch };
        await this.handle(body.events, this.current);
        this.attempt = 0;
      } catch (error) {
        if (error instanceof OrdinalHttpError && error.code === 'member_lease_lost') {
          this.options.onError?.(error, this.attempt);
          continue;
        }
        if (!isRetryable(error)) throw error;
        this.options.onError?.(error, this.attempt);
        await new Promise((r) => setTimeout(r, backoffDelay(this.attempt++, this.options.backoff)));
      }
    }
    await this.settled();
  }

  /** Waits for the last batch's acks; throws what they could not retry. */
  private async settled(): Promise<void> {
    await this.settling;
    const failure = this.settleFailure;
    this.settleFailure = null;
    if (failure) throw failure.error;
  }

  private async handle(events: GroupDelivery[], lease: Lease): Promise<void> {
    if (events.length === 0) return;
    const { memberId } = lease;
    const heartbeat = setInterval(() => {
      this.client
        .request('POST', `${this.path}/fetch`, { memberId, max: 0 })
        .catch((error: unknown) => this.options.onError?.(error, 0));
    }, this.options.heartbeatMs ?? 2000);
    try {
      await this.handleBatch(events, lease);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * Runs the handler on each event, then sends the batch's acks and nacks without waiting for
   * them: the next fetch goes out meanwhile (the member's next batch does not wait for a round
   * trip of this one's ack). The previous batch's are awaited first.
   */
  private async handleBatch(events: GroupDelivery[], lease: Lease): Promise<void> {
    const acked: number[] = [];
    const settled = {
      retry: [] as Array<[number, string]>,
      park: [] as number[],
      skip: [] as number[],
    };
    for (const event of events) {
      try {
        const outcome = await this.options.handler(event);
        if (outcome === 'skip' || outcome === 'park') settled[outcome].push(event.index);
        else acked.push(event.index);
      } catch (error) {
        settled.retry.push([event.index, error instanceof Error ? error.message : String(error)]);
      }
    }
    await this.settled();
    this.settling = this.settleBatch(lease, acked, settled).catch((error: unknown) => {
      // A lost lease is final for this batch (its events went to others): said, not thrown.
      // So is a passing failure once the member was told to stop (it stops retrying then).
      if (
        (error instanceof OrdinalHttpError && error.code === 'member_lease_lost') ||
        (this.stopped && isRetryable(error))
      )
        this.options.onError?.(error, 0);
      else this.settleFailure = { error };
    });
  }

  private async settleBatch(
    lease: Lease,
    acked: number[],
    settled: { retry: Array<[number, string]>; park: number[]; skip: number[] },
  ): Promise<void> {
    if (acked.length > 0) await this.settle(lease, 'ack', { indices: acked });
    for (const [index, reason] of settled.retry)
      await this.settle(lease, 'nack', { indices: [index], action: 'retry', reason });
    if (settled.park.length > 0)
      await this.settle(lease, 'nack', {
        indices: settled.park,
        action: 'park',
        reason: 'parked by the handler',
      });
    if (settled.skip.length > 0)
      await this.settle(lease, 'nack', {
        indices: settled.skip,
        action: 'skip',
        reason: 'skipped by the handler',
      });
  }

  private async settle(
    lease: Lease,
    route: 'ack' | 'nack',
    body: Record<string, unknown>,
  ): Promise<void> {
    const { memberId, epoch } = lease;
    for (let attempt = 0; ; attempt++) {
      try {
        const { body: answer } = await this.client.request<GroupSettleResponse>(
          'POST',
          `${this.path}/${route}`,
          { memberId, epoch, ...body },
        );
        if (route === 'ack')
          this.options.onAcknowledged?.(answer.acknowledged ?? [], answer.notHeld);
        return;
      } catch (error) {
        // A lost lease is final for this batch (run() fetches again); others are retried here so
        // a passing failure does not cost the whole batch a redelivery.
        if (!isRetryable(error) || this.stopped) throw error;
        this.options.onError?.(error, attempt);
        await new Promise((r) => setTimeout(r, backoffDelay(attempt, this.options.backoff)));
      }
    }
  }
}
