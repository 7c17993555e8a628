import { Logger } from '@nestjs/common';
import type { ChannelModel } from 'amqplib';
import type { StoredMessage } from '@ordinal/log';
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
 */
export abstract class PushInterface {
  protected readonly logger: Logger;
  protected state: InterfaceState = 'starting';
  protected readonly counters = { published: 0, skipped: 0, staleAcks: 0, restarts: 0, late: 0 };
  protected lastError: string | null = null;
  private readonly stopping = new AbortController();
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

  /** Starts supervising (idempotent). */
  start(): void {
    this.supervisor ??= this.supervise();
  }

  /** Stops the current run and the supervisor. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.supervisor;
    this.state = 'stopped';
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
      this.current = { controller: run, ended: ended.then(() => undefined, () => undefined) };
      try {
        await ended;
      } catch (error) {
        this.lastError = (error as Error).message;
        if (!stop.aborted) this.logger.warn(`Interface ${this.config.name} stopped: ${this.lastError}; starting again with back-off`);
      } finally {
        this.current = null;
        offDown();
        stop.removeEventListener('abort', abortRun);
      }
      if (stop.aborted) break;
      this.counters.restarts++;
      this.state = this.amqp.isCurrent(connection) ? 'retrying' : 'disconnected';
      await sleep(backoffDelay(this.attempt++, { initialMs: this.options.retryInitialMs, maxMs: this.options.retryMaxMs }), stop);
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
