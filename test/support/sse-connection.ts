import http from 'node:http';

/** One parsed Server-Sent Event. */
export interface SseEvent {
  event: string;
  id?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire data, probed by the e2e specs with expect (see eslint.config.js)
  data: any;
}

/**
 * A raw SSE connection for tests (node:http, so a test can stop reading and let TCP
 * backpressure build). Parses events as they arrive; `waitFor` waits for a condition on them.
 */
export class SseConnection {
  readonly events: SseEvent[] = [];
  /** Each event's block as it came on the wire (its lines, without the blank line ending it), beside `events`. */
  readonly blocks: string[] = [];
  /** When each event arrived (kept beside the events, which suites compare whole). */
  private readonly arrivals = new WeakMap<SseEvent, number>();
  ended = false;
  private buffer = '';
  private readonly waiters = new Set<() => void>();
  private constructor(
    private readonly request: http.ClientRequest,
    readonly response: http.IncomingMessage,
  ) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => this.onData(chunk));
    const end = () => {
      this.ended = true;
      this.notify();
    };
    response.on('end', end);
    response.on('close', end);
    response.on('error', end);
  }

  /** Opens `path`; resolves once the status line and headers arrived. */
  static open(
    baseUrl: string,
    path: string,
    headers: Record<string, string>,
  ): Promise<SseConnection> {
    return new Promise((resolve, reject) => {
      const request = http.get(new URL(path, baseUrl), { headers }, (response) =>
        resolve(new SseConnection(request, response)),
      );
      request.on('error', reject);
    });
  }

  get status(): number {
    return this.response.statusCode ?? 0;
  }

  /** When `event` arrived (Date.now()), for latency figures. */
  arrivedAt(event: SseEvent): number {
    const at = this.arrivals.get(event);
    if (at === undefined) throw new Error('not an event of this connection');
    return at;
  }

  /** Indices of the `message` events received so far. */
  indices(): number[] {
    return this.events
      .filter((e) => e.event === 'message')
      .map((e) => (e.data as { message: { id: number } }).message.id);
  }

  /** The raw body of a non-stream answer (an error), parsed as JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire data, as SseEvent.data
  async json(): Promise<any> {
    await this.waitFor(() => this.ended, 5000, 'the end of the body');
    return JSON.parse(this.buffer);
  }

  pause(): void {
    this.response.pause();
  }

  resume(): void {
    this.response.resume();
  }

  close(): void {
    this.request.destroy();
  }

  /** Waits (event-driven) until `check` holds; fails after the deadline. */
  waitFor(
    check: () => boolean,
    timeoutMs = 10_000,
    what = 'a condition on the stream',
  ): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = () => {
        if (!check()) return;
        this.waiters.delete(waiter);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        const last = this.events.at(-1);
        reject(
          new Error(
            `Timed out after ${timeoutMs} ms waiting for ${what}; ${this.events.length} events, last ${JSON.stringify(last)?.slice(0, 200)}, ended=${this.ended}`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    if (this.status !== 200) return;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: SseEvent = { event: 'message', data: undefined };
      this.arrivals.set(event, Date.now());
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event.event = line.slice(7);
        else if (line.startsWith('id: ')) event.id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      event.data = data.length > 0 ? (JSON.parse(data.join('\n')) as unknown) : undefined;
      this.events.push(event);
      this.blocks.push(block);
    }
    this.notify();
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
