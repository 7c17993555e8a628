/**
 * One SSE consumer in its own process (an external service reading the log with
 * `@ordinal/client`'s pull consumer, `client.consume`), the like-for-like baseline of
 * `npm run bench:groups`: it reads every event from START_INDEX to END_INDEX in order, as one
 * connection parsed by the client, and calls a handler per event that counts it (as the quiet
 * handler of group-member.ts does), with a bookmark in memory. Environment: BASE_URL, TOKEN
 * (default `dev-ordinal-token`), START_INDEX, END_INDEX.
 *
 * Prints `consumer ready <pid>`, starts when a line arrives on stdin (so the parent can start
 * its clock and CPU meter first), prints `consumer done <handled> <reconnections>` once past
 * END_INDEX and stays until SIGTERM or the end of stdin (a process that has exited has no CPU
 * figure to read).
 */
import { memoryBookmark, OrdinalClient, type PullConsumer } from '@ordinal/client';

const env = process.env;
const client = new OrdinalClient({
  baseUrl: env.BASE_URL!,
  token: env.TOKEN ?? 'dev-ordinal-token',
});
const startIndex = Number(env.START_INDEX);
const endIndex = Number(env.END_INDEX);
let handled = 0;
let reconnections = 0;
let consumer: PullConsumer | undefined;

function start(): void {
  consumer = client.consume({
    bookmark: memoryBookmark(startIndex - 1),
    endIndex,
    handler: () => {
      handled++;
    },
    onError: (error) => {
      reconnections++;
      process.stderr.write(`consumer error: ${String(error)}\n`);
    },
  });
  consumer.done.then(
    () => process.stdout.write(`consumer done ${handled} ${reconnections}\n`),
    (error: unknown) => {
      process.stderr.write(`consumer failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
}

process.stdout.on('error', () => undefined);
process.stdin.once('data', start);
process.stdin.once('end', () => process.exit(0));
process.once('SIGTERM', () => {
  void (consumer?.stop() ?? Promise.resolve()).then(() => process.exit(0));
});
process.stdout.write(`consumer ready ${process.pid}\n`);
