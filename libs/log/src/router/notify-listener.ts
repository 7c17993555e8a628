import { Logger } from '@nestjs/common';
import pg from 'pg';

/** How a NotifyListener reaches the database and what it tells its owner. */
export interface NotifyListenerOptions {
  /** Settings of the dedicated connection (the DataSource's credentials). */
  client: pg.ClientConfig;
  /** Channel name: a constant, never input. */
  channel: string;
  onNotify(payload: string): void;
  /** Called after every (re)connection: notifications may have been missed meanwhile. */
  onConnected(): void;
  /** Called when an established LISTEN is lost (notifications are missed until `onConnected`). */
  onLost?(): void;
  /** First and longest wait before reconnecting (ms). @default 250, 10000 */
  minRetryMs?: number;
  maxRetryMs?: number;
}

/**
 * LISTEN on one channel over a dedicated connection that reconnects by itself with
 * exponential back-off. Missing notifications is harmless: the router's poll and the call to
 * `onConnected` after a reconnection make it read the log again.
 */
export class NotifyListener {
  private readonly logger = new Logger(NotifyListener.name);
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private attempt = 0;
  private stopped = false;
  private listening = false;

  constructor(private readonly options: NotifyListenerOptions) {}

  /** True while LISTEN is established. */
  get connected(): boolean {
    return this.listening;
  }

  start(): void {
    void this.open();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({
      application_name: 'ordinal-listener',
      keepAlive: true,
      ...this.options.client,
    });
    this.client = client;
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    client.on('notification', (n) => {
      if (n.channel === this.options.channel) this.options.onNotify(n.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.options.channel}`);
      if (this.client !== client) return;
      this.listening = true;
      if (this.attempt > 0) this.logger.log(`LISTEN ${this.options.channel} re-established`);
      this.attempt = 0;
      this.options.onConnected();
    } catch (error) {
      this.lost(client, error);
    }
  }

  private lost(client: pg.Client, error?: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    const wasListening = this.listening;
    this.listening = false;
    client.end().catch(() => undefined);
    if (wasListening && !this.stopped) this.options.onLost?.();
    if (this.stopped) return;
    const min = this.options.minRetryMs ?? 250;
    const max = this.options.maxRetryMs ?? 10_000;
    const delay = Math.min(max, min * 2 ** this.attempt++);
    if (this.attempt === 1) {
      const why = error instanceof Error ? error.message : 'connection ended';
      this.logger.warn(
        `LISTEN ${this.options.channel} lost (${why}); reconnecting, the poll covers the gap`,
      );
    }
    this.timer = setTimeout(() => void this.open(), delay);
    this.timer.unref();
  }
}
