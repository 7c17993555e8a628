/**
 * A consumer group member in its own process (an external service using `@ordinal/client`'s
 * `consumerGroup`), run by the consumer group tests and `npm run bench:groups`. Environment:
 *
 * - BASE_URL (or BASE_URLS, comma-separated: after a network error it goes on with the next
 *   server process), TOKEN (default `dev-ordinal-token`), GROUP, MEMBER_ID (optional)
 * - MAX (events per fetch, default 100), WAIT_MS (long poll, default 1000)
 * - HANG_AFTER (after handling this many events the handler never returns: the member holds
 *   what it was given, unacknowledged, until killed)
 * - FAIL_INDICES (comma-separated indices whose handler always throws)
 * - HEARTBEAT_MS (lease renewal while a batch is handled, default 400)
 * - QUIET (`1`: print only `acked-total <count>` after each ack, the events acknowledged so far, for the benchmark)
 *
 * Prints `member ready`, then `start <index> <attempt> <key> <time>` as the handler starts on an
 * event (time in ms with fractions, wall clock), and `acked <i,j,…>` with what each ack's answer
 * counted as acknowledged. SIGTERM stops it after the batch in hand.
 */
import {
  ConsumerGroupMember,
  OrdinalClient,
  OrdinalHttpError,
  type GroupDelivery,
} from '@ordinal/client';

const env = process.env;
const clients = (env.BASE_URLS ?? env.BASE_URL!)
  .split(',')
  .map((baseUrl) => new OrdinalClient({ baseUrl, token: env.TOKEN ?? 'dev-ordinal-token' }));
let current = 0;
/** Requests through one server process; a network error moves on to the next (any serves any member). */
const requester = {
  async request<T>(method: string, path: string, body?: unknown) {
    try {
      return await clients[current].request<T>(method, path, body);
    } catch (error) {
      if (!(error instanceof OrdinalHttpError)) current = (current + 1) % clients.length;
      throw error;
    }
  },
};
const hangAfter = env.HANG_AFTER === undefined ? Infinity : Number(env.HANG_AFTER);
const failing = new Set((env.FAIL_INDICES ?? '').split(',').filter(Boolean).map(Number));
const quiet = env.QUIET === '1';
let handled = 0;
let acknowledged = 0;

const keyOf = (event: GroupDelivery) =>
  (event.body as { key?: string } | null)?.key ?? event.streamId ?? '-';

const member = new ConsumerGroupMember(requester, {
  group: env.GROUP!,
  memberId: env.MEMBER_ID,
  max: Number(env.MAX ?? 100),
  waitMs: Number(env.WAIT_MS ?? 1000),
  heartbeatMs: Number(env.HEARTBEAT_MS ?? 400),
  handler: async (event) => {
    if (!quiet)
      process.stdout.write(
        `start ${event.index} ${event.deliveryAttempt} ${keyOf(event)} ${(performance.timeOrigin + performance.now()).toFixed(3)}\n`,
      );
    if (++handled > hangAfter) await new Promise(() => undefined);
    if (failing.has(event.index)) throw new Error(`poison ${event.index}`);
  },
  onAcknowledged: (indices) => {
    acknowledged += indices.length;
    process.stdout.write(quiet ? `acked-total ${acknowledged}\n` : `acked ${indices.join(',')}\n`);
  },
  onError: (error) => process.stderr.write(`member error: ${String(error)}\n`),
});

// The parent may stop reading first (a benchmark that has its figure): nothing to report then.
process.stdout.on('error', () => undefined);
process.stdout.write(`member ready ${process.pid}\n`);
process.once('SIGTERM', () => {
  void member.stop().then(() => {
    process.stdout.write(`member stopped acked ${acknowledged}\n`);
    process.exit(0);
  });
});
member.done.catch((error: unknown) => {
  process.stderr.write(`member failed: ${String(error)}\n`);
  process.exit(1);
});
