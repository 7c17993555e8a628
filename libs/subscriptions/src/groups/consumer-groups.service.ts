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
import {
  isArchivedRange,
  LOG_MODULE_OPTIONS,
  type ResolvedLogOptions,
} from '@ordinal/log/internal';
import { execute, OrdinalError, queryPrepared, toPosition } from '@ordinal/pg';
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
import { GroupTransaction } from './group-transaction.js';
import { GroupWake } from './group-wake.js';
import { GroupCounters } from './group-counters.js';
import { readGroupStatus } from './group-status-reader.js';
import {
  deleteGroup,
  insertGroup,
  readGroups,
  updateDefinition,
  type GroupRow,
} from './sql/group-rows.sql.js';
import { renewMember } from './sql/group-members.sql.js';
import {
  ackDeliveries,
  nackDeliveries,
  unbatchDeliveries,
  type NackPlan,
} from './sql/group-deliveries.sql.js';
import {
  claimForMember,
  renderClaimed,
  claimedDeliveries,
  type ClaimRow,
  type ClaimedDelivery,
  type RenderedRow,
} from './sql/group-claim.sql.js';
import { fillQuery } from './sql/group-fill.sql.js';
import { WATCH_PASSED } from './sql/group-watch.sql.js';
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
const READ_PAGE = 500;
/** Deliveries one group keeps read ahead of its members at most (ready and in flight together). */
const READ_AHEAD = 10_000;

/**
 * Consumer groups (docs/consumer-groups.md): competing members over HTTP, with acks, redelivery
 * after a timeout or a member's death, parking, and one exact checkpoint per group. Every change
 * is one transaction holding the group's row lock, and all state is in PostgreSQL, so any server
 * process serves any member; a member's epoch is checked inside the transaction that acks. A
 * fetch and an ack are one round trip each (functions of the migrations): members of one group
 * serialise on its lock, so the lock is held for one statement, not for a conversation.
 */
@Injectable()
export class ConsumerGroupsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ConsumerGroupsService.name);
  private readonly server = `${hostname()}:${process.pid}`;
  private readonly wake = new GroupWake();
  private readonly concurrent: boolean;
  private readonly off: (() => void)[] = [];
  private readonly lateDue = new Map<string, number>();
  /** Per group, whether its last fetch here saw positions watched for late arrivals. */
  private readonly watching = new Map<string, boolean>();
  /** Per group, the definition its read-on query is built from (the fetch's function checks it). */
  private readonly definitions = new Map<string, ConsumerGroupDefinition>();
  /** The highest safe head read here; `headStale` once this process committed more. */
  private head = 0;
  private headStale = true;
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
    this.off.push(
      writer.onCommit(() => {
        this.headStale = true;
        this.wake.wakeAll();
      }),
    );
    this.off.push(
      watermark.onLate(() => {
        this.lateDue.clear();
        this.wake.wakeAll();
      }),
    );
  }

  /**
   * Defines the groups the options declare (created, or their settings updated); each was
   * checked when the options were read (`checkGroupDeclarations`).
   */
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
    this.definitions.delete(name);
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
      const seen = this.wake.seen(name);
      const result = await this.claim(name, memberId, max, left);
      if (result.events.length > 0 || left === 0 || this.closing || signal?.aborted) return result;
      await this.wake.wait(name, Math.min(left, this.options.groupPollMs), signal, seen);
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
      acked: string;
    }>(
      this.dataSource.manager,
      ackDeliveries(name, memberId, epoch, indices, this.options.groupMemberTimeoutMs),
    );
    if (row.found === 0) throw new ConsumerGroupNotFoundError(name);
    if (row.renewed === 0) throw new MemberLeaseLostError(name, memberId, epoch);
    const done = row.acked === '' ? [] : row.acked.split(',').map(Number);
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
      await execute(tx.runner, unbatchDeliveries(name, memberId, epoch, indices));
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

  /**
   * One fetch's claim: one round trip when the group has ready events or the log can be read on
   * up to the safe head this process last read (read again once this process committed more). A
   * claim that found nothing, with nothing to read below that head, reads the safe head again and
   * claims once more if it moved; one that found events answers with them (a long poll answers
   * as soon as there is one), and the next fetch reads on.
   */
  private async claim(
    name: string,
    memberId: string,
    max: number,
    waitMs: number,
  ): Promise<GroupFetchResult> {
    try {
      return await this.claimHot(name, memberId, max, waitMs);
    } catch (error) {
      if (!isArchivedRange(error)) throw error;
      throw new OrdinalError(
        'index_archived',
        `Consumer group '${name}' reads on into an archived segment: consumer groups read hot segments only (docs/storage.md); restore the segment (ordinal segments restore) or define the group from an index above it`,
        { cause: error },
      );
    }
  }

  private async claimHot(
    name: string,
    memberId: string,
    max: number,
    waitMs: number,
  ): Promise<GroupFetchResult> {
    if (this.concurrent) await this.checkLateWhenDue(name);
    const head = this.headStale ? await this.freshHead() : this.head;
    let result = await this.claimOnce(name, memberId, max, waitMs, head);
    let parked = result.parked;
    if (result.starved && result.events.length === 0) {
      const fresh = await this.freshHead();
      if (fresh > head) {
        result = await this.claimOnce(name, memberId, max, waitMs, fresh);
        parked += result.parked;
      }
    }
    const { epoch, events } = result;
    this.counters.add(name, 'parked', parked);
    this.counters.add(name, 'redelivered', events.filter((e) => e.deliveryAttempt > 1).length);
    this.counters.add(name, 'delivered', events.length);
    return { memberId, epoch, events };
  }

  /** One call of `ordinal_group_claim`, then the claimed messages rendered (group-claim.sql.ts). */
  private async claimOnce(
    name: string,
    memberId: string,
    max: number,
    waitMs: number,
    head: number,
  ): Promise<{
    epoch: number;
    events: GroupFetchResult['events'];
    parked: number;
    starved: boolean;
  }> {
    for (let tries = 0; ; tries++) {
      const definition = await this.definitionOf(name);
      const concurrentRead = this.concurrent && !('category' in definition.source);
      const rows = await execute<ClaimRow>(
        this.dataSource.manager,
        claimForMember({
          group: name,
          memberId,
          max,
          leaseMs: this.options.groupMemberTimeoutMs + waitMs,
          server: this.server,
          identity: {
            source: definition.source,
            strategy: definition.strategy,
            keyPath: definition.keyPath,
          },
          head,
          readPage: READ_PAGE,
          readAhead: READ_AHEAD,
          fill: fillQuery(definition),
          watch: concurrentRead ? WATCH_PASSED : null,
          retentionMs: this.options.groupMemberRetentionMs,
        }),
      );
      const [row] = rows;
      if (row.found === 0) {
        this.definitions.delete(name);
        throw new ConsumerGroupNotFoundError(name);
      }
      // The group was deleted and defined again with another source, strategy or keyPath.
      if (row.stale === 1) {
        this.definitions.delete(name);
        if (tries < 3) continue;
        throw new Error(`Consumer group '${name}': its definition kept changing during a fetch`);
      }
      this.watching.set(name, row.watching === 1);
      const claimed = claimedDeliveries(row);
      const rendered = await this.render(claimed);
      return {
        epoch: toPosition(row.epoch),
        parked: row.parked,
        starved: row.starved === 1,
        events: claimed.map((c) => {
          const message = rendered.get(c.index)!;
          return {
            index: c.index,
            deliveryAttempt: c.attempt,
            late: c.late,
            json: message.json,
            ...(message.personal ? { personal: message.personal } : {}),
          };
        }),
      };
    }
  }

  /**
   * Renders the claimed messages in a statement of its own, after the claim released the
   * group: it sees every commit made before it (a delete that hid one while the claim waited
   * for the lock included), and members render side by side instead of one at a time.
   */
  private async render(claimed: ClaimedDelivery[]): Promise<Map<number, RenderedRow>> {
    if (claimed.length === 0) return new Map();
    const query = renderClaimed(claimed.map((c) => c.index));
    // Prepared (one name per shape of its text): parsing and planning it on every fetch cost
    // PostgreSQL about a fifth of rendering a batch of 500 (docs/performance.md, "Consumer groups").
    const rows = await queryPrepared<RenderedRow>(this.dataSource, query.name, query);
    const byIndex = new Map(rows.map((r) => [Number(r.index), r]));
    for (const c of claimed)
      if (!byIndex.has(c.index))
        throw new Error(`Consumer group delivery ${c.index} has no message`);
    return byIndex;
  }

  /** The group's definition as last read here (its source, strategy and keyPath never change). */
  private async definitionOf(name: string): Promise<ConsumerGroupDefinition> {
    const known = this.definitions.get(name);
    if (known) return known;
    const [row] = await execute<GroupRow>(this.dataSource.manager, readGroups(name));
    if (!row) throw new ConsumerGroupNotFoundError(name);
    const definition = row.definition as ConsumerGroupDefinition;
    this.definitions.set(name, definition);
    return definition;
  }

  /** Reads the safe head (every position at or below it is final) and keeps the highest. */
  private async freshHead(): Promise<number> {
    this.headStale = false;
    try {
      this.head = Math.max(this.head, await this.reader.safeHead());
    } catch (error) {
      this.headStale = true;
      throw error;
    }
    return this.head;
  }

  /**
   * Concurrent ordering: every `lateCheckMs` (or at once after the watermark saw a late
   * arrival), while the group watches positions it passed, a transaction of its own looks for
   * rows that arrived there and makes them deliveries marked late, before the claim.
   */
  private async checkLateWhenDue(name: string): Promise<void> {
    if (Date.now() < (this.lateDue.get(name) ?? 0) || this.watching.get(name) === false) return;
    this.lateDue.set(name, Date.now() + this.options.lateCheckMs);
    await this.dataSource.transaction(async (manager) => {
      await (await GroupTransaction.lock(manager, name)).checkLate();
    });
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
