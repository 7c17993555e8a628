import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { isTenantId, LiveRouter, LogReader, LogWatermark, LogWriter } from '@ordinal/log';
import { LOG_MODULE_OPTIONS, type ResolvedLogOptions } from '@ordinal/log/internal';
import { ConsumerOwnership } from '@ordinal/ownership';
import { execute } from '@ordinal/pg';
import { DataSource } from 'typeorm';
import {
  ConsumerNotRunningError,
  DuplicateSubscriptionError,
  SubscriptionNotFoundError,
  WaitTimeoutError,
} from './errors/index.js';
import { SUBSCRIPTIONS_OPTIONS } from './subscriptions.module-definition.js';
import { SUBSCRIPTION_NOTICES } from './subscriptions.constants.js';
import type { ResolvedSubscriptionsOptions } from './subscriptions-options.js';
import type { SubscribeOptions } from './subscription-context.js';
import { Subscription, type SubscriptionDeps } from './runner/subscription.js';
import { ParkedStore, type ParkedMessage } from './runner/parked-store.js';
import type { ParkedReplay } from './runner/parked-replay.js';
import { lockCheckpoints } from './sql/index.js';
import { SourceReader } from './source/source-reader.js';
import { SharedSource } from './source/shared-source.js';
import { describeStream } from './source/subscription-stream.js';
import { ConsumerDirectory } from './directory/consumer-directory.js';
import { ConsumerRequests, type ConsumerCommand } from './directory/consumer-requests.js';
import { buildReports, type LocalView } from './directory/build-reports.js';
import type { SubscriptionReport } from './directory/consumer-report.js';

/** How long an operation waits for the process that owns the consumer. */
const REQUEST_TIMEOUT_MS = 30_000;
/** How often a command waiting for a consumer's owner looks again (ms). */
const OWNER_POLL_MS = 100;

/**
 * Every subscription and projection: subscribe from code, list every consumer any process
 * registered on the database (with its owner), wait for an index (read-your-own-writes),
 * rebuild, replay parked messages. Subscriptions made before the application has started
 * begin at bootstrap (after every migration ran); all stop at shutdown, each after its batch
 * in flight. Each runs in one process at a time across every process on the database
 * (ConsumerOwnership): here while this process holds its lease, standing by otherwise.
 * Operations on a consumer another process owns are carried to it (`consumer_requests`).
 */
@Injectable()
export class SubscriptionsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly subscriptions = new Map<string, Subscription>();
  /** Groups: a consumer's own name, or a partitioned projection's name → its partitions. */
  private readonly groups = new Map<string, Subscription[]>();
  private readonly deps: SubscriptionDeps;
  private readonly parked: ParkedStore;
  private readonly directory: ConsumerDirectory;
  /** Ownership's takeover bound: how long a command waits for a consumer's owner to appear (ms). */
  private readonly takeoverMs: number;
  private readonly requests: ConsumerRequests;
  private readonly off: (() => void)[] = [];
  private started = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly reader: LogReader,
    writer: LogWriter,
    watermark: LogWatermark,
    @Inject(LOG_MODULE_OPTIONS) logOptions: ResolvedLogOptions,
    @Inject(SUBSCRIPTIONS_OPTIONS) options: ResolvedSubscriptionsOptions,
    private readonly ownership: ConsumerOwnership,
    router: LiveRouter,
  ) {
    const concurrent = logOptions.ordering === 'concurrent';
    this.takeoverMs = logOptions.takeoverMs;
    this.parked = new ParkedStore(dataSource);
    this.directory = new ConsumerDirectory(dataSource);
    const notified = () => router.notifyVerified;
    this.requests = new ConsumerRequests(dataSource, 250, notified);
    this.deps = { dataSource, reader, watermark, concurrent, options, notified };
    this.off.push(writer.onCommit(() => this.subscriptions.forEach((s) => s.notify())));
    this.off.push(watermark.onLate(() => this.subscriptions.forEach((s) => s.notifyLate())));
    // Other processes' commits (NOTIFY, or the router's poll) wake them as own commits do; so
    // does a change of whether NOTIFY is heard (an idle wait was timed for the other case).
    this.off.push(
      router.onNotice((notice) => {
        if (notice.kind === 'head' || notice.kind === 'delivery')
          this.subscriptions.forEach((s) => s.notify());
        if (
          notice.kind === 'delivery' ||
          (notice.kind === 'notice' && notice.payload === SUBSCRIPTION_NOTICES.consumerRequest)
        )
          this.requests.kick();
      }),
    );
  }

  /** Registers a subscription and starts it (at bootstrap when the application is not started yet). */
  subscribe(options: SubscribeOptions): Subscription {
    return this.subscribeGroup(options.name, [options])[0];
  }

  /**
   * Registers the partitions of one consumer group (a partitioned projection): each its own
   * subscription, checkpoint and owner; ownership shares them among the group's processes.
   */
  subscribeGroup(group: string, members: SubscribeOptions[]): Subscription[] {
    for (const name of [group, ...members.map((m) => m.name)]) {
      if (this.subscriptions.has(name) || this.groups.has(name))
        throw new DuplicateSubscriptionError(name);
    }
    // Partitions share one read of their stream in this process (each keeps its own keys).
    for (const m of members)
      if (m.tenant !== undefined && !isTenantId(m.tenant))
        throw new TypeError(
          `Subscription '${m.name}' has tenant ${JSON.stringify(m.tenant)}; a tenant id is 1-63 letters, digits, '_' or '.' (docs/tenants.md)`,
        );
    const sameStream = members.every(
      (m) =>
        describeStream(m.stream) === describeStream(members[0].stream) &&
        m.tenant === members[0].tenant,
    );
    const shared =
      members.length > 1 && sameStream
        ? new SharedSource(
            new SourceReader(
              members[0].stream,
              this.reader,
              this.deps.concurrent,
              members[0].tenant,
            ),
            members.length * 3,
            members.map((m) => ({ name: m.name, acceptsKeys: m.acceptsKeys })),
          )
        : undefined;
    const list = members.map((options) => new Subscription(options, this.deps, shared));
    for (const subscription of list) {
      this.subscriptions.set(subscription.name, subscription);
      subscription.manage();
    }
    this.groups.set(group, list);
    if (this.started) void this.own(group, list);
    return list;
  }

  /** Stops a subscription (or group) and forgets it (its checkpoint rows stay). */
  async unsubscribe(name: string): Promise<void> {
    const members = this.members(name);
    this.groups.delete(name);
    for (const m of members) this.subscriptions.delete(m.name);
    await this.ownership.leave(name);
    await Promise.all(members.map((m) => m.close()));
  }

  /** The subscription (or partition) of that name in this process; SubscriptionNotFoundError otherwise. */
  get(name: string): Subscription {
    const subscription =
      this.subscriptions.get(name) ??
      (this.groups.get(name)?.length === 1 ? this.groups.get(name)![0] : undefined);
    if (!subscription) throw new SubscriptionNotFoundError(name);
    return subscription;
  }

  /**
   * The positions the members of `group` running here watch for a late row (concurrent mode:
   * passed without a row); empty when it is not registered here.
   */
  pendingLate(group: string): number[] {
    return (this.groups.get(group) ?? []).flatMap((m) => m.status().pendingLate);
  }

  /** Names of every subscription and projection registered in this process (partitioned ones by projection). */
  names(): string[] {
    return [...this.groups.keys()];
  }

  /**
   * Every subscription and projection any process registered on the database (or the named
   * one): owner, heartbeat age, position, head, lag, state, last error, parked, partitions.
   */
  async report(name?: string): Promise<SubscriptionReport[]> {
    const [rows, head] = await Promise.all([this.directory.rows(), this.reader.safeHead()]);
    const locals = new Map<string, LocalView>();
    for (const [key, s] of this.subscriptions)
      locals.set(key, { status: s.status(), ownedHere: s.currentLease !== null || !this.started });
    const reports = buildReports(rows, locals, head, this.ownership.owner);
    if (name === undefined) return reports;
    const found = reports.filter((r) => r.name === name);
    if (found.length === 0) throw new SubscriptionNotFoundError(name);
    return found;
  }

  /** Resolves once `name` (every partition) has applied everything up to `index`; WaitTimeoutError after `timeoutMs`. */
  async waitFor(name: string, index: number, timeoutMs = 5000): Promise<number> {
    const local =
      this.groups.get(name) ??
      (this.subscriptions.has(name) ? [this.subscriptions.get(name)!] : null);
    if (local && local.every((s) => s.currentLease))
      return Math.min(...(await Promise.all(local.map((s) => s.waitFor(index, timeoutMs)))));
    return this.waitInDatabase(name, index, timeoutMs);
  }

  /** The parked messages of `name` (all partitions), oldest first. */
  async listParked(name: string): Promise<ParkedMessage[]> {
    const names = await this.consumerNames(name);
    const lists = await Promise.all(names.map((n) => this.parked.list(n)));
    return lists.flat().sort((a, b) => a.position - b.position);
  }

  /** Applies `name`'s parked messages again (after a fix), in the process owning each partition. */
  async replayParked(name: string): Promise<ParkedReplay> {
    const names = await this.consumerNames(name);
    const results = (await Promise.all(
      names.map((n) => this.onOwner(n, 'replay-parked')),
    )) as ParkedReplay[];
    return {
      replayed: results.reduce((n, r) => n + (r?.replayed ?? 0), 0),
      remaining: results.reduce((n, r) => n + (r?.remaining ?? 0), 0),
      error: results.find((r) => r?.error)?.error ?? null,
    };
  }

  /** Resumes a subscription (every partition) its `stop` error policy stopped. */
  async resume(name: string): Promise<void> {
    const names = await this.consumerNames(name);
    await Promise.all(names.map((n) => this.onOwner(n, 'resume')));
  }

  /**
   * Rebuild: the consumer's own rebuild when it has one (a projection's blue/green build),
   * unless `mode` is `in-place`. In place: in one transaction the checkpoint rows are locked, the read model's reset
   * hook runs and every partition's checkpoint goes back to the start with the current head
   * as the new replay boundary; then the owners replay. Runs here when this process has the
   * consumer registered (it has the reset hook), else in a process that owns it.
   */
  async rebuild(name: string, mode: 'own' | 'in-place' = 'own'): Promise<void> {
    const members =
      this.groups.get(name) ??
      (this.subscriptions.has(name) ? [this.subscriptions.get(name)!] : null);
    if (!members) {
      await this.requestRemote(name, mode === 'in-place' ? 'rebuild-in-place' : 'rebuild');
      return;
    }
    const own = members[0].options.rebuild;
    if (own && mode !== 'in-place') {
      await own();
      return;
    }
    await Promise.all(members.map((m) => m.stop()));
    const head = await this.reader.safeHead();
    try {
      await this.dataSource.transaction(async (manager) => {
        await execute(manager, lockCheckpoints(members.map((m) => m.name)));
        await members[0].options.reset?.(manager);
        for (const m of members) await m.resetCheckpoint(manager, head);
      });
    } finally {
      for (const m of members) m.rebuilt(head);
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    this.started = true;
    await Promise.all([...this.groups].map(([group, list]) => this.own(group, list)));
    this.requests.serve(
      () =>
        [...this.groups]
          .filter(([, list]) => list.some((s) => s.currentLease))
          .flatMap(([group, list]) => [
            group,
            ...list.filter((s) => s.currentLease).map((s) => s.name),
          ]),
      (consumer, command) => this.runHere(consumer, command),
    );
  }

  async onModuleDestroy(): Promise<void> {
    this.off.splice(0).forEach((off) => off());
    this.requests.close();
    this.started = false;
    await Promise.all([...this.groups.keys()].map((group) => this.ownership.leave(group)));
    await Promise.all([...this.subscriptions.values()].map((s) => s.close()));
  }

  /** Checkpoints first (their replay boundary is the head at start), then ownership. */
  private async own(group: string, list: Subscription[]): Promise<void> {
    await Promise.all(list.map((s) => s.prepare().catch(() => undefined)));
    if (!this.started || this.groups.get(group) !== list) return;
    this.ownership.join(group, list[0].options.kind ?? 'subscription', list);
  }

  /** The members of a group registered here (a consumer's own name is a group of one). */
  private members(name: string): Subscription[] {
    const list =
      this.groups.get(name) ??
      (this.subscriptions.has(name) ? [this.subscriptions.get(name)!] : null);
    if (!list) throw new SubscriptionNotFoundError(name);
    return list;
  }

  /** The consumer names of `name`: its partitions, from this process or the directory. */
  private async consumerNames(name: string): Promise<string[]> {
    const local = this.groups.get(name);
    if (local) return local.map((s) => s.name);
    if (this.subscriptions.has(name)) return [name];
    const rows = (await this.directory.rows()).filter(
      (r) => r.group_name === name || r.name === name,
    );
    if (rows.length === 0) throw new SubscriptionNotFoundError(name);
    return rows.map((r) => r.name);
  }

  /** Runs a command where the consumer is owned: here, or through a request to its owner. */
  private onOwner(consumer: string, command: ConsumerCommand): Promise<unknown> {
    const local = this.subscriptions.get(consumer);
    if (local && (local.currentLease || !this.started)) return this.runHere(consumer, command);
    return this.requestRemote(consumer, command);
  }

  /**
   * Asks the live owner of `name` (a consumer, or any partition of a group). With none live, it
   * waits for one up to the takeover bound — within which ownership runs a consumer again after
   * its owner stopped, died or left it (a projection's build joined again after a
   * re-promotion) — and only then is it ConsumerNotRunningError.
   */
  private async requestRemote(name: string, command: ConsumerCommand): Promise<unknown> {
    const deadline = Date.now() + this.takeoverMs;
    for (;;) {
      const rows = (await this.directory.rows()).filter(
        (r) => r.group_name === name || r.name === name,
      );
      if (rows.length === 0) throw new SubscriptionNotFoundError(name);
      if (rows.some((r) => r.owner_live))
        return this.requests.request(name, command, REQUEST_TIMEOUT_MS);
      if (Date.now() >= deadline) throw new ConsumerNotRunningError(name);
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(OWNER_POLL_MS, Math.max(1, deadline - Date.now()))),
      );
    }
  }

  private async runHere(consumer: string, command: ConsumerCommand): Promise<unknown> {
    if (command === 'rebuild') return this.rebuild(consumer);
    if (command === 'rebuild-in-place') return this.rebuild(consumer, 'in-place');
    const subscription = this.get(consumer);
    if (command === 'replay-parked') return subscription.replayParked();
    subscription.resume();
    return null;
  }

  /** Waits for checkpoints another process moves (polling the database). */
  private async waitInDatabase(name: string, index: number, timeoutMs: number): Promise<number> {
    const names = await this.consumerNames(name);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const positions = await this.directory.positions(names);
      const lowest = Math.min(...names.map((n) => positions.get(n) ?? 0));
      if (lowest >= index) return lowest;
      if (Date.now() >= deadline) throw new WaitTimeoutError(name, index, timeoutMs);
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(50, Math.max(1, deadline - Date.now()))),
      );
    }
  }
}
