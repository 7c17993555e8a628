import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { LogReader, LogWatermark, LogWriter } from '@ordinal/log';
import { LOG_MODULE_OPTIONS, type ResolvedLogOptions } from '@ordinal/log/internal';
import { execute, toPosition } from '@ordinal/pg';
import { DataSource } from 'typeorm';
import { InvalidConsumerGroupError, MemberLeaseLostError } from '../errors/index.js';
import { ConsumerGroupConflictError, ConsumerGroupNotFoundError } from '../errors/index.js';
import { SUBSCRIPTIONS_OPTIONS } from '../subscriptions.module-definition.js';
import type { ResolvedSubscriptionsOptions } from '../subscriptions-options.js';
import {
  changedIdentity,
  checkGroupName,
  resolveGroupDefinition,
  type ConsumerGroupDefinition,
  type ConsumerGroupInput,
} from './group-definition.js';
import type {
  ConsumerGroupStatus,
  GroupAckResult,
  GroupFetchResult,
  GroupParkedEvent,
} from './group-status.js';
import { GroupTransaction, READ_AHEAD } from './group-transaction.js';
import { GroupWake } from './group-wake.js';
import { GroupCounters } from './group-counters.js';
import { readGroupStatus } from './group-status-reader.js';
import { deleteGroup, insertGroup, updateDefinition } from './sql/group-rows.sql.js';
import { joinMember, renewMember } from './sql/group-members.sql.js';
import {
  ackDeliveries,
  claimDeliveries,
  countHeld,
  countReady,
  expireDeliveries,
  nackDeliveries,
  type ClaimedRow,
  type NackPlan,
} from './sql/group-deliveries.sql.js';
import { listGroupParked, replayGroupParked } from './sql/group-parked.sql.js';

/** A fetch's request. */
export interface GroupFetchRequest {
  /** Omitted: the member is new and gets an id (returned). */
  memberId?: string;
  /** @default 100 */
  max?: number;
  /** How long to wait for an event (ms, at most 30000). @default 0 */
  waitMs?: number;
}

/** The longest a fetch waits. */
export const MAX_WAIT_MS = 30_000;
/** Events read from the log per read when the group runs dry. */
const READ_PAGE = 1000;

/**
 * Consumer groups (docs/consumer-groups.md): competing members over HTTP, with acks, redelivery
 * after a timeout or a member's death, parking, and one exact checkpoint per group. Every change
 * is one transaction holding the group's row lock, and all state is in PostgreSQL, so any server
 * process serves any member; a member's epoch is checked inside the transaction that acks.
 */
@Injectable()
export class ConsumerGroupsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ConsumerGroupsService.name);
  private readonly server = `${hostname()}:${process.pid}`;
  private readonly wake = new GroupWake();
  private readonly concurrent: boolean;
  private readonly off: (() => void)[] = [];
  private readonly lateDue = new Map<string, number>();
  private closing = false;
  /** Counters per group since this process started (metrics). */
  readonly counters = new GroupCounters();

  constructor(
    private readonly dataSource: DataSource,
    private readonly reader: LogReader,
    writer: LogWriter,
    watermark: LogWatermark,
    @Inject(LOG_MODULE_OPTIONS) logOptions: ResolvedLogOptions,
    @Inject(SUBSCRIPTIONS_OPTIONS) private readonly options: ResolvedSubscriptionsOptions,
  ) {
    this.concurrent = logOptions.ordering === 'concurrent';
    this.off.push(writer.onCommit(() => this.wake.wakeAll()));
    this.off.push(
      watermark.onLate(() => {
        this.lateDue.clear();
        this.wake.wakeAll();
      }),
    );
  }

  /** Defines the groups the options declare (created, or their settings updated). */
  async onApplicationBootstrap(): Promise<void> {
    for (const { name, ...input } of this.options.consumerGroups) {
      const { created } = await this.define(name, input);
      this.logger.log(
        `Consumer group '${name}' ${created ? 'created' : 'updated'} from the options`,
      );
    }
  }

  onModuleDestroy(): void {
    this.closing = true;
    this.off.forEach((off) => off());
    this.wake.wakeAll();
  }

  /**
   * Creates a group, or updates the settings of an existing one (ackTimeoutMs, maxDeliveries,
   * maxInFlight, parkAfter); its source, `from`, strategy and keyPath cannot change.
   */
  async define(name: string, input: ConsumerGroupInput): Promise<{ created: boolean }> {
    checkGroupName(name);
    const definition = resolveGroupDefinition(input);
    const start =
      definition.from === 'start'
        ? 0
        : definition.from === 'end'
          ? await this.reader.safeHead()
          : definition.from;
    return this.dataSource.transaction(async (manager) => {
      if ((await execute(manager, insertGroup(name, definition, start))).length > 0)
        return { created: true };
      const tx = await GroupTransaction.lock(manager, name);
      const changed = changedIdentity(tx.definition, definition);
      if (changed) throw new ConsumerGroupConflictError(name, changed);
      await execute(manager, updateDefinition(name, definition));
      return { created: false };
    });
  }

  /** Deletes a group with its members, deliveries and parked references. */
  async remove(name: string): Promise<void> {
    const rows = await execute(this.dataSource.manager, deleteGroup(name));
    if (rows.length === 0) throw new ConsumerGroupNotFoundError(name);
    this.wake.wake(name);
  }

  /** One group's state. */
  async status(name: string): Promise<ConsumerGroupStatus> {
    const [status] = await readGroupStatus(this.dataSource.manager, this.reader, name);
    if (!status) throw new ConsumerGroupNotFoundError(name);
    return status;
  }

  /** Every group's state, by name. */
  list(): Promise<ConsumerGroupStatus[]> {
    return readGroupStatus(this.dataSource.manager, this.reader, null);
  }

  /**
   * Joins (or renews) the member and hands it up to `max` events, as many as it may still hold
   * (maxInFlight); waits up to `waitMs` for one when none is there. A member declared dead comes
   * back with a new epoch.
   */
  async fetch(
    name: string,
    request: GroupFetchRequest,
    signal?: AbortSignal,
  ): Promise<GroupFetchResult> {
    const memberId = request.memberId ?? randomUUID();
    if (memberId.length === 0 || memberId.length > 200)
      throw new InvalidConsumerGroupError('memberId must be 1-200 characters');
    const max = request.max ?? 100;
    const until = Date.now() + Math.min(request.waitMs ?? 0, MAX_WAIT_MS);
    for (;;) {
      const left = Math.max(0, until - Date.now());
      const result = await this.claim(name, memberId, max, left);
      if (result.events.length > 0 || left === 0 || this.closing || signal?.aborted) return result;
      await this.wake.wait(name, Math.min(left, this.options.groupPollMs), signal);
    }
  }

  /** Acknowledges events the member holds under `epoch`. */
  async ack(
    name: string,
    memberId: string,
    epoch: number,
    indices: number[],
  ): Promise<GroupAckResult> {
    const [row] = await execute<{
      found: number;
      renewed: number;
      checkpoint: string | null;
      acked: string[];
    }>(
      this.dataSource.manager,
      ackDeliveries(name, memberId, epoch, indices, this.options.groupMemberTimeoutMs),
    );
    if (row.found === 0) throw new ConsumerGroupNotFoundError(name);
    if (row.renewed === 0) throw new MemberLeaseLostError(name, memberId, epoch);
    const done = row.acked.map(toPosition);
    const held = new Set(done);
    const result: GroupAckResult = {
      done,
      notHeld: [...new Set(indices)].filter((i) => !held.has(i)).sort((a, b) => a - b),
      checkpoint: toPosition(row.checkpoint),
    };
    this.wake.wake(name);
    this.counters.add(name, 'acked', result.done.length);
    return result;
  }

  /** Gives back events the member holds: retry, park (with the reason) or skip. */
  async nack(
    name: string,
    memberId: string,
    epoch: number,
    indices: number[],
    action: NackPlan['action'],
    reason: string,
  ): Promise<GroupAckResult> {
    let parked = 0;
    const result = await this.settle(name, memberId, epoch, indices, async (tx) => {
      const rows = await execute<{ index: string; parked: number }>(
        tx.runner,
        nackDeliveries(name, memberId, epoch, indices, {
          action,
          reason,
          maxDeliveries: tx.definition.maxDeliveries,
          parkAfter: tx.definition.parkAfter,
        }),
      );
      parked = rows[0]?.parked ?? 0;
      return { done: rows.map((r) => toPosition(r.index)), checkpoint: await tx.advance() };
    });
    this.counters.add(name, 'nacked', result.done.length);
    this.counters.add(name, 'parked', parked);
    return result;
  }

  /** The group's parked references, oldest first. */
  async parked(name: string, limit: number): Promise<GroupParkedEvent[]> {
    await this.status(name);
    const rows = await execute<{
      index: string;
      reason: string;
      attempts: number;
      parked_at: Date;
    }>(this.dataSource.manager, listGroupParked(name, limit));
    return rows.map((r) => ({
      index: toPosition(r.index),
      reason: r.reason,
      attempts: r.attempts,
      parkedAt: new Date(r.parked_at).toISOString(),
    }));
  }

  /** Puts up to `limit` parked events back to be delivered again; the checkpoint stays. */
  async replayParked(
    name: string,
    limit: number,
  ): Promise<{ replayed: number[]; checkpoint: number }> {
    const result = await this.dataSource.transaction(async (manager) => {
      const tx = await GroupTransaction.lock(manager, name);
      const rows = await execute<{ index: string }>(manager, replayGroupParked(name, limit));
      return {
        replayed: rows.map((r) => toPosition(r.index)).sort((a, b) => a - b),
        checkpoint: await tx.advance(),
      };
    });
    this.wake.wake(name);
    return result;
  }

  private async claim(
    name: string,
    memberId: string,
    max: number,
    waitMs: number,
  ): Promise<GroupFetchResult> {
    const leaseMs = this.options.groupMemberTimeoutMs + waitMs;
    const { epoch, claimed, expired } = await this.dataSource.transaction(async (manager) => {
      const tx = await GroupTransaction.lock(manager, name);
      const { definition } = tx;
      const [{ epoch }] = await execute<{ epoch: string }>(
        manager,
        joinMember(name, memberId, leaseMs, this.server),
      );
      const [expired] = await execute<{ parked: number; released: number }>(
        manager,
        expireDeliveries(name, definition.maxDeliveries),
      );
      if (this.concurrent && Date.now() >= (this.lateDue.get(name) ?? 0)) {
        this.lateDue.set(name, Date.now() + this.options.lateCheckMs);
        await tx.checkLate();
      }
      const readTo = tx.readTo;
      const claimed = await this.take(tx, memberId, toPosition(epoch), definition, max);
      // Only reading on or parking can move the checkpoint here (handing out never does).
      if (tx.readTo !== readTo || expired.parked > 0) await tx.advance();
      return { epoch: toPosition(epoch), claimed, expired };
    });
    this.counters.add(name, 'parked', expired.parked);
    this.counters.add(name, 'redelivered', claimed.filter((c) => c.attempt > 1).length);
    this.counters.add(name, 'delivered', claimed.length);
    return {
      memberId,
      epoch,
      events: claimed.map((c) => ({
        index: toPosition(c.index),
        deliveryAttempt: c.attempt,
        late: c.late,
        json: c.json,
        ...(c.personal ? { personal: c.personal } : {}),
      })),
    };
  }

  /** Claims for the member what it may still hold, reading the log on when the ready ones run out. */
  private async take(
    tx: GroupTransaction,
    memberId: string,
    epoch: number,
    definition: ConsumerGroupDefinition,
    max: number,
  ): Promise<ClaimedRow[]> {
    const [{ held }] = await execute<{ held: number }>(
      tx.runner,
      countHeld(tx.group, memberId, epoch),
    );
    let room = Math.min(max, definition.maxInFlight - held);
    const claimed: ClaimedRow[] = [];
    const pinned = definition.strategy !== 'round_robin';
    for (let reads = 0; room > 0 && reads < 3; reads++) {
      const got = await execute<ClaimedRow>(
        tx.runner,
        claimDeliveries(tx.group, room, memberId, epoch, definition.ackTimeoutMs, pinned),
      );
      claimed.push(...got);
      room -= got.length;
      if (room <= 0) break;
      const [{ outstanding }] = await execute<{ outstanding: number }>(
        tx.runner,
        countReady(tx.group),
      );
      if (outstanding >= READ_AHEAD) break;
      if (!(await tx.readOn(this.reader, this.concurrent, Math.max(room, READ_PAGE)))) break;
    }
    return claimed.sort((a, b) => toPosition(a.index) - toPosition(b.index));
  }

  /** One ack or nack: the member's epoch checked (and its lease renewed) in the transaction that changes its deliveries. */
  private async settle(
    name: string,
    memberId: string,
    epoch: number,
    indices: number[],
    change: (tx: GroupTransaction) => Promise<{ done: number[]; checkpoint: number }>,
  ): Promise<GroupAckResult> {
    const result = await this.dataSource.transaction(async (manager) => {
      const tx = await GroupTransaction.lock(manager, name);
      const renewed = await execute(
        manager,
        renewMember(name, memberId, epoch, this.options.groupMemberTimeoutMs),
      );
      if (renewed.length === 0) throw new MemberLeaseLostError(name, memberId, epoch);
      const { done, checkpoint } = await change(tx);
      const held = new Set(done);
      return {
        done: done.sort((a, b) => a - b),
        notHeld: [...new Set(indices)].filter((i) => !held.has(i)).sort((a, b) => a - b),
        checkpoint,
      };
    });
    this.wake.wake(name);
    return result;
  }
}
