/**
 * Sample: ACME's notification service as a pull consumer (docs/reading.md).
 *
 *   node apps/acme/dist/reading/pull-consumer.sample.js
 *   ORDINAL_URL=http://localhost:8083 ORDINAL_TOKEN=dev-ordinal-token BOOKMARK_FILE=/tmp/notify.bookmark \
 *   TYPES=OrderPlaced,OrderCancelled END_INDEX=100 node apps/acme/dist/reading/pull-consumer.sample.js
 *
 * It keeps its bookmark in a file, updates its state for every message, and sends e-mails
 * only once it has caught up, so a replay never e-mails customers about old orders.
 */
import { OrdinalClient, fileBookmark, type OrdinalMessage } from '@ordinal/client';

const client = new OrdinalClient({
  baseUrl: process.env.ORDINAL_URL ?? 'http://localhost:8083',
  token: process.env.ORDINAL_TOKEN ?? 'dev-ordinal-token',
});
const openOrders = new Map<string, number>();

function apply(message: OrdinalMessage): void {
  const orderId = (message.body as { orderId?: string }).orderId ?? `#${message.id}`;
  if (message.messageType === 'OrderPlaced') openOrders.set(orderId, message.id);
  if (message.messageType === 'OrderCancelled') openOrders.delete(orderId);
}

function sendEmail(message: OrdinalMessage): void {
  // A real service sends here, keyed by message.id so a redelivery is recognised.
  console.log(`e-mail to ${message.userId ?? 'nobody'}: ${message.messageType} (#${message.id})`);
}

const consumer = client.consume({
  bookmark: fileBookmark(process.env.BOOKMARK_FILE ?? '/tmp/acme-notifications.bookmark'),
  types: process.env.TYPES?.split(',') ?? ['OrderPlaced', 'OrderCancelled'],
  endIndex: process.env.END_INDEX ? Number(process.env.END_INDEX) : undefined,
  onConnected: ({ startIndex, headIndex }) =>
    console.log(`connected from ${startIndex}, server is at ${headIndex}`),
  onError: (error) =>
    console.log(`stream: ${(error as Error).message}; reconnecting from the bookmark`),
  handler: (message, { caughtUp, headIndex }) => {
    apply(message);
    if (caughtUp) sendEmail(message);
    else
      console.log(
        `#${message.id} ${message.messageType} (replay, ${Math.max(0, headIndex - message.id)} behind)`,
      );
  },
});

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void consumer.stop());
await consumer.done;
console.log(`stopped at bookmark ${consumer.position}; ${openOrders.size} open orders`);
