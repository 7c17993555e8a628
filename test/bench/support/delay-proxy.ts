import net from 'node:net';

/** How long the proxy holds each chunk, each way. */
export interface DelaySettings {
  /** One-way delay in ms (a round trip through the proxy takes twice this). */
  delayMs: number;
  /** Up to this many ms more, uniformly at random, per chunk (order is kept all the same). */
  jitterMs?: number;
}

/** What crossed the proxy since it started (or since `resetStats`). */
export interface DelayProxyStats {
  connections: number;
  /** Chunks (socket reads) from the client towards the upstream server, and bytes. */
  upChunks: number;
  upBytes: number;
  /** Chunks from the upstream server back to the client, and bytes. */
  downChunks: number;
  downBytes: number;
  /**
   * Round trips: on each connection, every time the client sends after the server last spoke
   * (or for the first time) counts one. For a request/response protocol such as PostgreSQL's
   * this is the number of times the client waited for an answer before it went on.
   */
  roundTrips: number;
}

export interface DelayProxy {
  port: number;
  /** Changes the delay for chunks that arrive from now on. */
  setDelay(settings: DelaySettings): void;
  stats(): DelayProxyStats;
  resetStats(): void;
  close(): Promise<void>;
}

interface Held {
  at: number;
  chunk: Buffer | null; // null: the sender ended its side
}

/**
 * One direction of one connection: each chunk read from `from` is written to `to` once it has
 * been held for the delay (plus jitter), never before a chunk read earlier. Nothing is held
 * beyond that: when `to` cannot take more, `from` is paused until it drains.
 */
class Lane {
  private readonly held: Held[] = [];
  private timer: NodeJS.Timeout | null = null;
  private lastRelease = 0;

  constructor(
    private readonly to: net.Socket,
    private readonly from: net.Socket,
    private readonly settings: () => DelaySettings,
  ) {}

  push(chunk: Buffer | null): void {
    const { delayMs, jitterMs = 0 } = this.settings();
    const wanted = performance.now() + delayMs + (jitterMs > 0 ? Math.random() * jitterMs : 0);
    // Order is kept: a chunk never overtakes one read before it.
    const at = Math.max(wanted, this.lastRelease);
    this.lastRelease = at;
    this.held.push({ at, chunk });
    if (delayMs === 0 && jitterMs === 0 && this.held.length === 1) return this.release();
    this.arm();
  }

  private arm(): void {
    if (this.timer || this.held.length === 0) return;
    const wait = Math.max(0, this.held[0].at - performance.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.release();
    }, wait);
  }

  private release(): void {
    const now = performance.now();
    // setTimeout may fire up to a millisecond early in performance.now() terms: allow for it.
    while (this.held.length > 0 && this.held[0].at <= now + 0.5) {
      const { chunk } = this.held.shift()!;
      if (this.to.destroyed) {
        this.held.length = 0;
        return;
      }
      if (chunk === null) {
        this.to.end();
        continue;
      }
      if (!this.to.write(chunk) && !this.from.isPaused()) {
        this.from.pause();
        this.to.once('drain', () => this.from.resume());
      }
    }
    this.arm();
  }

  /** Drops what is held (the other side is gone). */
  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.held.length = 0;
  }

  get pending(): boolean {
    return this.held.length > 0;
  }
}

const emptyStats = (): DelayProxyStats => ({
  connections: 0,
  upChunks: 0,
  upBytes: 0,
  downChunks: 0,
  downBytes: 0,
  roundTrips: 0,
});

/**
 * A TCP proxy on 127.0.0.1 that holds every chunk `delayMs` (+ jitter) each way between its
 * clients and `upstream`: a database across a network, on one machine. Ends and closes are
 * passed on in order after the data before them; an error on one side destroys the other.
 */
export async function startDelayProxy(
  upstream: { host: string; port: number },
  initial: DelaySettings = { delayMs: 0 },
  listenPort = 0,
): Promise<DelayProxy> {
  let settings: DelaySettings = { ...initial };
  let stats = emptyStats();
  const sockets = new Set<net.Socket>();
  // Half-open: an end is passed on by itself; the other direction goes on until it ends too.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    stats.connections += 1;
    client.setNoDelay(true);
    const server = net.connect({
      port: upstream.port,
      host: upstream.host,
      allowHalfOpen: true,
    });
    server.setNoDelay(true);
    sockets.add(client);
    sockets.add(server);
    const up = new Lane(server, client, () => settings);
    const down = new Lane(client, server, () => settings);
    // The client speaks first in PostgreSQL's protocol; a turn is counted when it speaks again after an answer.
    let lastSpoke: 'client' | 'server' | null = null;
    client.on('data', (chunk: Buffer) => {
      stats.upChunks += 1;
      stats.upBytes += chunk.length;
      if (lastSpoke !== 'client') stats.roundTrips += 1;
      lastSpoke = 'client';
      up.push(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      stats.downChunks += 1;
      stats.downBytes += chunk.length;
      lastSpoke = 'server';
      down.push(chunk);
    });
    client.on('end', () => up.push(null));
    server.on('end', () => down.push(null));
    const teardown = (error?: Error) => {
      // An abrupt close (reset, error) is passed on abruptly, after the delay like everything else.
      const gone = () => {
        up.clear();
        down.clear();
        client.destroy(error);
        server.destroy(error);
      };
      setTimeout(gone, settings.delayMs);
    };
    client.on('error', teardown);
    server.on('error', teardown);
    // A side gone is an end for the other, in order after what it sent.
    client.on('close', () => {
      sockets.delete(client);
      up.push(null);
    });
    server.on('close', () => {
      sockets.delete(server);
      down.push(null);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    setDelay: (next) => {
      settings = { ...next };
    },
    stats: () => ({ ...stats }),
    resetStats: () => {
      stats = emptyStats();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
