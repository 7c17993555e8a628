import { Logger } from '@nestjs/common';
import type { ChannelModel } from 'amqplib';
import { type StoredMessage } from '@ordinal/log';
import { OwnershipLostError } from '@ordinal/ownership';
import type { Lease, OwnedConsumer } from '@ordinal/ownership';
import type { AmqpConnection } from '../connection/amqp-connection.service.js';
import { backoffDelay, sleep } from '../connection/backoff.js';
import type { ResolvedAmqpOptions } from '../amqp-options.js';
import type { ResolvedInterfaceConfig } from './interface-config.js';
import type { InterfaceState, InterfaceStatus } from './interface-status.js';

/**
 * What every push interface shares: a supervisor that runs it on each broker connection and,
 * whenever a run fails (connection lost, channel closed, publish refused, database down),
 * starts a new run after a back-off: the seed's interfaces stayed silent after an outage,
 * these recover by themselves. A run is the subclass's `run`.
 *
 * Under consumer ownership (lease `interface:<name>`) it runs only in the process holding the
 * lease, checks it before every publish, and stands by once it is lost, so two servers with
 * one interface publish each message once.
 */
export abstract class PushInterface implements OwnedConsumer {
  protected readonly logger: Logger;
  protected state: InterfaceState = 'starting';
  protected readonly counters = { published: 0, skipped: 0, staleAcks: 0, restarts: 0, late: 0 };
  protected lastError: string | null = null;
  private stopping = new AbortController();
  private lease: Lease | null = null;
  private supervisor: Promise<void> | null = null;
  private readonly includes: Set<string> | null;

  constructor(
    readonly config: ResolvedInterfaceConfig,
    protected readonly amqp: AmqpConnection,
    protected readonly options: ResolvedAmqpOptions,
  ) {
    this.logger = new Logger(`Interface:${config.name}`);
    this.includes = config.includeTypes.length > 0 ? new Set(config.includeTypes) : null;
  }

  /** One run on `connection`; returns or throws when it ends (it ends only on failure or stop). */
  protected abstract run(connection: ChannelModel, signal: AbortSignal): Promise<void>;

  /** The interface's status (lag is added by the caller, who knows the head). */
  abstract status(): InterfaceStatus;

  /** The lease's name: interfaces share a namespace with nothing else. */
  get name(): string {
    return `interface:${this.config.name}`;
  }

  /** Waiting for its lease (shown until this process owns the interface). */
  standBy(): void {
    if (!this.supervisor) this.state = 'standby';
  }

  /** This process owns the interface now: run it. */
  acquired(lease: Lease): void {
    this.lease = lease;
    this.taken(lease);
    this.start();
  }

  /** A subclass's hook when this process takes the interface over (before its first run). */
  protected taken(lease: Lease): void {
    void lease;
  }

  /**
   * Recorded on the lease row with each heartbeat and at hand-over: the status, so that
   * every server lists the interface with what its owner sees (`GET /api/interfaces`).
   */
  progress(): unknown {
    return { status: this.status() };
  }

  /** Another process owns it now (or shutdown): stop and stand by. */
  async released(): Promise<void> {
    await this.stop();
    this.lease = null;
    this.state = 'standby';
  }

  /** Starts supervising (idempotent). */
  start(): void {
    if (this.supervisor) return;
    if (this.stopping.signal.aborted) this.stopping = new AbortController();
    this.supervisor = this.supervise();
  }

  /** Stops the current run and the supervisor. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.supervisor;
    this.supervisor = null;
    this.state = 'stopped';
  }

  /** Before every publish: throws OwnershipLostError once this process no longer owns the interface. */
  protected ensureOwned(): void {
    if (this.lease && !this.lease.isHeld()) throw new OwnershipLostError(this.name);
  }

  protected matches(message: StoredMessage): boolean {
    return this.includes === null || this.includes.has(message.messageType);
  }

  /** Aborted once the interface is stopping. */
  protected get stopSignal(): AbortSignal {
    return this.stopping.signal;
  }

  /** A run made progress: the next failure starts its back-off from the beginning. */
  protected healthy(): void {
    this.attempt = 0;
  }

  private attempt = 0;
  private current: { controller: AbortController; ended: Promise<void> } | null = null;

  /**
   * Ends the current run (if any) so the supervisor starts a new one at once; resolves when
   * the run has ended, its last bookmark save included.
   */
  protected async endRun(reason: string): Promise<void> {
    const current = this.current;
    if (!current) return;
    this.attempt = 0;
    current.controller.abort(new Error(reason));
    await current.ended;
  }

  private async supervise(): Promise<void> {
    const stop = this.stopping.signal;
    while (!stop.aborted) {
      const connection = await this.nextConnection(stop);
      if (connection === null) break;
      const run = new AbortController();
      const abortRun = () => run.abort();
      const offDown = this.amqp.onDown(abortRun);
      stop.addEventListener('abort', abortRun);
      const ended = this.run(connection, run.signal);
      this.current = {
        controller: run,
        ended: ended.then(
          () => undefined,
          () => undefined,
        ),
      };
      try {
        await ended;
      } catch (error) {
        this.lastError = (error as Error).message;
        if (!stop.aborted)
          this.logger.warn(
            `Interface ${this.config.name} stopped: ${this.lastError}; starting again with back-off`,
          );
      } finally {
        this.current = null;
        offDown();
        stop.removeEventListener('abort', abortRun);
      }
      if (stop.aborted) break;
      if (this.lease && !this.lease.isHeld()) {
        this.logger.warn(
          `Interface ${this.config.name}: this process no longer owns it; standing by`,
        );
        break;
      }
      this.counters.restarts++;
      this.state = this.amqp.isCurrent(connection) ? 'retrying' : 'disconnected';
      await sleep(
        backoffDelay(this.attempt++, {
          initialMs: this.options.retryInitialMs,
          maxMs: this.options.retryMaxMs,
        }),
        stop,
      );
    }
    this.state = 'stopped';
  }

  /** The live connection, as soon as there is one; null when stopped first. */
  private nextConnection(stop: AbortSignal): Promise<ChannelModel | null> {
    return new Promise((resolve) => {
      let off: () => void = () => undefined;
      const onStop = () => {
        off();
        resolve(null);
      };
      if (stop.aborted) return resolve(null);
      stop.addEventListener('abort', onStop, { once: true });
      off = this.amqp.onUp((connection) => {
        queueMicrotask(() => off());
        stop.removeEventListener('abort', onStop);
        resolve(connection);
      });
    });
  }
}
