import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { connect, type ChannelModel } from 'amqplib';
import { AMQP_MODULE_OPTIONS } from '../amqp.module-definition.js';
import type { ResolvedAmqpOptions } from '../amqp-options.js';
import { AmqpUnavailableError } from '../errors/index.js';
import { backoffDelay, sleep } from './backoff.js';
import { maskCredentials } from '@ordinal/pg';

/** Where the broker connection stands. */
export type ConnectionState = 'idle' | 'connecting' | 'up' | 'down' | 'closed';

type UpListener = (connection: ChannelModel) => void;
type DownListener = (reason: string) => void;

/**
 * The process's one broker connection. Connects in the background (a broker that is down
 * never blocks or crashes the server), reconnects after every loss with exponential back-off
 * and jitter, and tells its users when it is up (with the connection, to open their
 * channels) and when it went down (their channels are gone). Every 'error' and 'close' of the
 * connection is handled here; channels belong to their users, who listen to their own.
 */
@Injectable()
export class AmqpConnection implements OnApplicationShutdown {
  private readonly logger = new Logger(AmqpConnection.name);
  private readonly options: ResolvedAmqpOptions;
  private readonly upListeners = new Set<UpListener>();
  private readonly downListeners = new Set<DownListener>();
  private readonly stopping = new AbortController();
  private current: ChannelModel | null = null;
  private status: ConnectionState = 'idle';
  private loop: Promise<void> | null = null;
  private reconnects = 0;
  private connections = 0;

  constructor(@Inject(AMQP_MODULE_OPTIONS) options: ResolvedAmqpOptions) {
    this.options = options;
  }

  /** Starts connecting (idempotent); returns at once. */
  start(): void {
    if (this.loop || this.stopping.signal.aborted) return;
    this.loop = this.connectLoop();
  }

  /** Calls `listener` on every (re)connection, and now if connected; returns the unsubscribe. */
  onUp(listener: UpListener): () => void {
    this.upListeners.add(listener);
    if (this.current) listener(this.current);
    return () => this.upListeners.delete(listener);
  }

  /** Calls `listener` whenever the connection is lost; returns the unsubscribe. */
  onDown(listener: DownListener): () => void {
    this.downListeners.add(listener);
    return () => this.downListeners.delete(listener);
  }

  get state(): ConnectionState {
    return this.status;
  }

  /** Connections made after the first (broker restarts, network losses). */
  get reconnections(): number {
    return this.reconnects;
  }

  /** The connection, or an AmqpUnavailableError while it is down. */
  get connection(): ChannelModel {
    if (!this.current) throw new AmqpUnavailableError();
    return this.current;
  }

  /** True while `connection` is the live connection (not one lost since). */
  isCurrent(connection: ChannelModel): boolean {
    return this.current === connection;
  }

  /** The connection name the broker shows (`rabbitmqctl list_connections client_properties`). */
  get name(): string {
    return this.options.connectionName;
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    this.status = 'closed';
    const connection = this.current;
    this.current = null;
    if (connection) await connection.close().catch(() => undefined);
    await this.loop;
  }

  private async connectLoop(): Promise<void> {
    let attempt = 0;
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      this.status = 'connecting';
      try {
        const connection = await connect(
          withHeartbeat(this.options.url, this.options.heartbeatSeconds),
          {
            clientProperties: { connection_name: this.options.connectionName },
          },
        );
        if (signal.aborted) {
          await connection.close().catch(() => undefined);
          return;
        }
        this.attach(connection);
        return;
      } catch (error) {
        const delay = backoffDelay(attempt++, {
          initialMs: this.options.retryInitialMs,
          maxMs: this.options.retryMaxMs,
        });
        const log = attempt === 1 ? 'warn' : 'debug';
        this.logger[log](
          `Cannot connect to the AMQP broker (${describe(error)}); retrying in ${delay} ms (attempt ${attempt})`,
        );
        this.status = 'down';
        await sleep(delay, signal);
      }
    }
  }

  private attach(connection: ChannelModel): void {
    let lost = false;
    const onLost = (reason: string) => {
      if (lost) return;
      lost = true;
      if (this.current === connection) this.current = null;
      if (this.stopping.signal.aborted) return;
      this.status = 'down';
      this.logger.warn(`AMQP connection lost (${reason}); reconnecting with back-off`);
      for (const listener of this.downListeners) safely(() => listener(reason), this.logger);
      this.loop = this.connectLoop();
    };
    connection.on('error', (error: Error) =>
      this.logger.warn(`AMQP connection error: ${describe(error)}`),
    );
    connection.on('close', (error?: Error) => onLost(error ? describe(error) : 'closed'));
    connection.on('blocked', (reason: string) =>
      this.logger.warn(`AMQP broker blocked this connection: ${reason}`),
    );
    connection.on('unblocked', () => this.logger.log('AMQP broker unblocked this connection'));
    this.current = connection;
    this.status = 'up';
    if (this.connections > 0) this.reconnects++;
    this.connections++;
    this.logger.log(`Connected to the AMQP broker as '${this.options.connectionName}'`);
    for (const listener of this.upListeners) safely(() => listener(connection), this.logger);
  }
}

/** Adds `heartbeat` to the URL unless it names one. */
function withHeartbeat(url: string, seconds: number): string {
  const parsed = new URL(url);
  if (!parsed.searchParams.has('heartbeat')) parsed.searchParams.set('heartbeat', String(seconds));
  return parsed.toString();
}

/** An error as one line for the log, any URL's password in it masked. */
function describe(error: unknown): string {
  return maskCredentials(error instanceof Error ? error.message : String(error));
}

function safely(fn: () => void, logger: Logger): void {
  try {
    fn();
  } catch (error) {
    logger.error(`AMQP connection listener failed: ${describe(error)}`);
  }
}
