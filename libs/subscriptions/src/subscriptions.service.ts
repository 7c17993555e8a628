import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { ConsumerOwnership, LOG_MODULE_OPTIONS, LogReader, LogWatermark, LogWriter, resolveLogOptions, type LogModuleOptions } from '@ordinal/log';
import { DataSource } from 'typeorm';
import { DuplicateSubscriptionError, SubscriptionNotFoundError } from './errors/index.js';
import { SUBSCRIPTIONS_OPTIONS } from './subscriptions.module-definition.js';
import { resolveSubscriptionsOptions, type SubscriptionsModuleOptions } from './subscriptions-options.js';
import type { SubscribeOptions, SubscriptionStatus } from './subscription-context.js';
import { Subscription, type SubscriptionDeps } from './runner/subscription.js';
import { ParkedStore, type ParkedMessage } from './runner/parked-store.js';

/** A subscription's status with the log's safe head, its lag behind it and its parked messages. */
export type SubscriptionReport = SubscriptionStatus & { head: number; lag: number; parked: number };

/**
 * Every subscription and projection of the application: subscribe from code, list with
 * position and lag, wait for an index (read-your-own-writes), rebuild. Subscriptions made
 * before the application has started begin at bootstrap (after every migration ran); all stop
 * at shutdown, each after its batch in flight. Each runs in one process at a time across every
 * process on the database (ConsumerOwnership): here while this process holds its lease,
 * standing by otherwise.
 */
@Injectable()
export class SubscriptionsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly deps: SubscriptionDeps;
  private readonly parked: ParkedStore;
  private readonly off: (() => void)[] = [];
  private started = false;

  constructor(
    dataSource: DataSource,
    private readonly reader: LogReader,
    writer: LogWriter,
    watermark: LogWatermark,
    @Inject(LOG_MODULE_OPTIONS) logOptions: LogModuleOptions,
    @Inject(SUBSCRIPTIONS_OPTIONS) options: SubscriptionsModuleOptions,
    private readonly ownership: ConsumerOwnership,
  ) {
    const concurrent = resolveLogOptions(logOptions).ordering === 'concurrent';
    this.parked = new ParkedStore(dataSource);
    this.deps = { dataSource, reader, watermark, concurrent, options: resolveSubscriptionsOptions(options) };
    this.off.push(writer.onCommit(() => this.subscriptions.forEach((s) => s.notify())));
    this.off.push(watermark.onLate(() => this.subscriptions.forEach((s) => s.notifyLate())));
  }

  /** Registers a subscription and starts it (at bootstrap when the application is not started yet). */
  subscribe(options: SubscribeOptions): Subscription {
    if (this.subscriptions.has(options.name)) throw new DuplicateSubscriptionError(options.name);
    const subscription = new Subscription(options, this.deps);
    this.subscriptions.set(options.name, subscription);
    subscription.manage();
    if (this.started) void subscription.prepare().catch(() => undefined).then(() => this.own(subscription));
    return subscription;
  }

  /** Stops a subscription and forgets it (its checkpoint row stays). */
  async unsubscribe(name: string): Promise<void> {
    const subscription = this.get(name);
    this.subscriptions.delete(name);
    await this.ownership.leave(name);
    await subscription.close();
  }

  /** The subscription of that name; SubscriptionNotFoundError otherwise. */
  get(name: string): Subscription {
    const subscription = this.subscriptions.get(name);
    if (!subscription) throw new SubscriptionNotFoundError(name);
    return subscription;
  }

  /** Names of every subscription and projection. */
  names(): string[] {
    return [...this.subscriptions.keys()];
  }

  /** Status of every subscription (or the named one) with head and lag. */
  async report(name?: string): Promise<SubscriptionReport[]> {
    const list = name === undefined ? [...this.subscriptions.values()] : [this.get(name)];
    const head = await this.reader.safeHead();
    const parked = await this.parked.counts(list.map((s) => s.name));
    return list.map((s) => {
      const status = s.status();
      return { ...status, head, lag: Math.max(0, head - status.position), parked: parked.get(s.name) ?? 0 };
    });
  }

  /** Resolves once `name` has applied everything up to `index`; WaitTimeoutError after `timeoutMs`. */
  waitFor(name: string, index: number, timeoutMs = 5000): Promise<number> {
    return this.get(name).waitFor(index, timeoutMs);
  }

  /** The parked messages of `name`, oldest first. */
  listParked(name: string): Promise<ParkedMessage[]> {
    return this.get(name).listParked();
  }

  /** Applies `name`'s parked messages again (after a fix), oldest first; stops at one that fails again. */
  replayParked(name: string): Promise<{ replayed: number; remaining: number; error: string | null }> {
    return this.get(name).replayParked();
  }

  /** Resumes a subscription its `stop` error policy stopped. */
  resume(name: string): void {
    this.get(name).resume();
  }

  /** Resets the checkpoint (and the read model, through its reset hook) and replays (S9). */
  async rebuild(name: string): Promise<void> {
    await this.get(name).rebuild();
  }

  async onApplicationBootstrap(): Promise<void> {
    this.started = true;
    // Checkpoints first (their replay boundary is the head at start), then ownership.
    await Promise.all([...this.subscriptions.values()].map((s) => s.prepare().catch(() => undefined)));
    for (const subscription of this.subscriptions.values()) this.own(subscription);
  }

  /** Hands the subscription to consumer ownership: it runs here whenever this process holds it. */
  private own(subscription: Subscription): void {
    this.ownership.join(subscription.name, subscription.options.kind ?? 'subscription', [subscription]);
  }

  async onModuleDestroy(): Promise<void> {
    this.off.splice(0).forEach((off) => off());
    this.started = false;
    await Promise.all([...this.subscriptions.keys()].map((name) => this.ownership.leave(name)));
    await Promise.all([...this.subscriptions.values()].map((s) => s.close()));
  }
}
