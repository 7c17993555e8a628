import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { SseSession } from './sse-session.js';

/** What the registry tracks: a stream that runs to its end and can be closed (SseSession, a consumer group's stream). */
export type RegisteredStream = Pick<SseSession, 'run' | 'close'>;

/**
 * The open SSE streams of this server, so shutdown can end them at once instead of
 * waiting for connections that never finish on their own.
 */
@Injectable()
export class StreamRegistry implements BeforeApplicationShutdown {
  private readonly logger = new Logger(StreamRegistry.name);
  private readonly sessions = new Map<RegisteredStream, Promise<void>>();
  private closing = false;

  /** True once shutdown has begun: new streams are refused. */
  get isClosing(): boolean {
    return this.closing;
  }

  /** Open streams now. */
  get size(): number {
    return this.sessions.size;
  }

  /** Runs a session to its end, tracked. */
  async run(session: RegisteredStream): Promise<void> {
    const done = session.run();
    this.sessions.set(session, done);
    if (this.closing) session.close();
    try {
      await done;
    } finally {
      this.sessions.delete(session);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    if (this.sessions.size === 0) return;
    this.logger.log(`Closing ${this.sessions.size} open streams`);
    const running = [...this.sessions.values()];
    for (const session of this.sessions.keys()) session.close();
    await Promise.race([
      Promise.allSettled(running),
      new Promise((resolve) => setTimeout(resolve, 2000).unref()),
    ]);
  }
}
