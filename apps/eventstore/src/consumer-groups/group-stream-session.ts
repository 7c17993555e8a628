import { Logger } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { GroupSseEvent } from '@ordinal/contract';
import type { ConsumerGroupsService, GroupDeliveryEvent } from '@ordinal/subscriptions';
import { groupDeliveryJson } from './group-delivery.js';

/** The reconnection delay a standard EventSource is told to use (SSE `retry:`). */
const RETRY_MS = 2000;

/**
 * One member's stream of a consumer group: `lease` first (`{memberId, epoch}`), then each event
 * handed to it as `message` with `id: <index>`, a `heartbeat` when nothing came for a while.
 * It asks for what the member may still hold (maxInFlight minus its unacknowledged events), so
 * it never sends more than that. It ends when the member's lease is lost (the member was
 * declared dead: its events went to others), the group is deleted, the client leaves, or the
 * server shuts down; the client reconnects and gets its lease again.
 */
export class GroupStreamSession {
  private readonly logger = new Logger(GroupStreamSession.name);
  private readonly abort = new AbortController();
  private ended = false;

  constructor(
    private readonly groups: ConsumerGroupsService,
    private readonly raw: ServerResponse,
    private readonly group: string,
    private readonly lease: { memberId: string; epoch: number },
    private readonly heartbeatMs: number,
    /** For a reader with the `personal` scope: the deliveries with personal fields in clear. */
    private readonly reveal?: (events: GroupDeliveryEvent[]) => Promise<GroupDeliveryEvent[]>,
  ) {
    raw.once('close', () => this.close());
  }

  async run(): Promise<void> {
    const { memberId, epoch } = this.lease;
    try {
      this.send({ event: 'lease', data: { memberId, epoch } }, undefined, RETRY_MS);
      while (!this.ended) {
        const result = await this.groups.fetch(
          this.group,
          { memberId, max: Number.MAX_SAFE_INTEGER, waitMs: this.heartbeatMs },
          this.abort.signal,
        );
        if (this.ended) break;
        if (result.epoch !== epoch) {
          // Declared dead meanwhile (this process stalled longer than the member timeout): what it
          // held went to others; end, and the client starts over with a new lease.
          this.logger.warn(
            `Consumer group '${this.group}' member '${memberId}' lost lease epoch ${epoch}; ending its stream`,
          );
          break;
        }
        if (result.events.length === 0) {
          this.send({ event: 'heartbeat', data: { memberId, epoch } });
          continue;
        }
        let open = true;
        const events = this.reveal ? await this.reveal(result.events) : result.events;
        for (const event of events)
          open = this.write('message', groupDeliveryJson(event), event.index);
        if (!open) await this.drained();
      }
    } catch (error) {
      if (!this.ended)
        this.logger.warn(
          `Consumer group '${this.group}' stream of member '${memberId}' ended: ${String(error)}`,
        );
    } finally {
      this.close();
    }
  }

  /** Ends the stream (shutdown, client gone). */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.abort.abort();
    if (!this.raw.writableEnded) this.raw.end();
  }

  private send({ event, data }: GroupSseEvent, id?: number, retryMs?: number): boolean {
    return this.write(event, JSON.stringify(data), id, retryMs);
  }

  /** One event whose data is JSON text already (a delivery: rendered by PostgreSQL). */
  private write(
    event: GroupSseEvent['event'],
    data: string,
    id?: number,
    retryMs?: number,
  ): boolean {
    if (this.ended || this.raw.destroyed) return false;
    const idLine = id === undefined ? '' : `id: ${id}\n`;
    const retry = retryMs === undefined ? '' : `retry: ${retryMs}\n`;
    return this.raw.write(`event: ${event}\n${idLine}${retry}data: ${data}\n\n`);
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.raw.off('drain', done);
        this.raw.off('close', done);
        resolve();
      };
      this.raw.once('drain', done);
      this.raw.once('close', done);
    });
  }
}
