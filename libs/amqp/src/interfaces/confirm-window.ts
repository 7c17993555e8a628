import type { ConfirmChannel, Options } from 'amqplib';
import { PublishWindowSpan } from './publish-window-span.js';

/**
 * Publisher confirms with a window: up to `size` publishes are outstanding at once, so the
 * broker confirms them in groups (one fsync covers many) while memory stays bounded. The
 * first nack or channel failure fails every later `publish`, so the caller restarts.
 */
export class ConfirmWindow {
  private outstanding = 0;
  private failure: Error | null = null;
  private waiter: (() => void) | null = null;
  private drained = true;
  private confirmed = 0;
  /** The span publishes join now (a new one after `size` publishes, or once all are confirmed). */
  private span: PublishWindowSpan | null = null;

  constructor(
    private readonly channel: ConfirmChannel,
    private readonly size: number,
    /** Names the `ordinal.interface.publish` spans. */
    private readonly interfaceName = 'interface',
  ) {
    channel.on('drain', () => {
      this.drained = true;
      this.wake();
    });
    channel.on('close', () => this.fail(new Error('the channel closed')));
  }

  /** Publishes once the window has room; resolves when handed to the socket, not when confirmed. */
  async publish(
    queue: string,
    content: Buffer,
    options: Options.Publish,
    onConfirmed?: () => void,
  ): Promise<void> {
    while (!this.failure && (this.outstanding >= this.size || !this.drained)) {
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
    if (this.failure) throw this.failure;
    this.outstanding++;
    if (!this.span?.open) this.span = new PublishWindowSpan(this.interfaceName, queue, this.size);
    const span = this.span;
    span.add(options.headers as Record<string, unknown> | undefined);
    const written = this.channel.sendToQueue(queue, content, options, (error: unknown) => {
      this.outstanding--;
      if (error)
        this.fail(
          error instanceof Error ? error : new Error(`the broker refused a publish to ${queue}`),
        );
      else {
        this.confirmed++;
        onConfirmed?.();
        span.confirmed();
        if (this.outstanding === 0 && this.span === span) span.close();
      }
      this.wake();
    });
    if (!written) this.drained = false;
  }

  /** Resolves once every publish so far is confirmed; rejects on a failure (or after `timeoutMs`). */
  async settle(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.outstanding > 0 && !this.failure) {
      if (Date.now() > deadline)
        throw new Error(`${this.outstanding} publishes still unconfirmed after ${timeoutMs} ms`);
      await Promise.race([
        new Promise<void>((resolve) => (this.waiter = resolve)),
        new Promise((r) => setTimeout(r, 50)),
      ]);
    }
    if (this.failure) throw this.failure;
  }

  /** Publishes confirmed so far. */
  get confirmedCount(): number {
    return this.confirmed;
  }

  /** Publishes awaiting their confirm. */
  get pending(): number {
    return this.outstanding;
  }

  /** Fails the window: pending and later publishes reject with `error`. */
  fail(error: Error): void {
    this.failure ??= error;
    this.span?.fail(error);
    this.wake();
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}
