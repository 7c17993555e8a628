/**
 * `npm run bench:amqp` (I4, B2): drain of N queued input messages and replayable catch-up of
 * the same N messages to a consumer acknowledging in batches, each beside the broker's own
 * limit measured in the same run (a bare amqplib publisher with confirms to a durable queue,
 * and a bare consumer). The server runs as a child process. Prints one JSON object.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  connect,
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
} from 'amqplib';
import pg from 'pg';
import { inputQueueArguments } from '@ordinal/amqp/internal';
import { createBenchDatabase } from './support/bench-database.js';
import { startChild } from './support/child-server.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain = join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const N = Number(process.env.BENCH_MESSAGES ?? 100_000);
const WINDOW = 1000;
const AMQP = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const id = randomUUID().slice(0, 8);
const rate = (count: number, ms: number) => Math.round((count / ms) * 1000);
const body = (n: number) =>
  Buffer.from(
    JSON.stringify({ orderId: `o-${n}`, total: 49.9, lines: [{ sku: 'rocket', qty: 1 }] }),
  );

/** Publishes `count` messages with confirms, `WINDOW` outstanding at most; returns ms. */
async function publishConfirmed(
  channel: ConfirmChannel,
  queue: string,
  count: number,
  headers: (n: number) => Record<string, unknown>,
): Promise<number> {
  const started = performance.now();
  let outstanding = 0;
  let wake: (() => void) | null = null;
  let failed = null as Error | null; // set by the confirm callbacks
  for (let n = 1; n <= count; n++) {
    while (outstanding >= WINDOW) await new Promise<void>((r) => (wake = r));
    if (failed) throw failed;
    outstanding++;
    channel.sendToQueue(
      queue,
      body(n),
      {
        persistent: true,
        contentType: 'application/json',
        messageId: String(n),
        headers: headers(n),
      },
      (error: Error | null) => {
        if (error) failed = error;
        outstanding--;
        const w = wake;
        wake = null;
        w?.();
      },
    );
  }
  await channel.waitForConfirms();
  return performance.now() - started;
}

/** Consumes until `done(msg)` says so, acknowledging in runs of 500; returns [first, last] arrival times. */
function consumeUntil(
  channel: Channel,
  queue: string,
  done: (msg: ConsumeMessage) => boolean,
  onBatch?: (batch: ConsumeMessage[]) => void,
): Promise<{ first: number; last: number; count: number }> {
  return new Promise((resolve) => {
    let first = 0;
    let count = 0;
    let batch: ConsumeMessage[] = [];
    const flush = () => {
      if (batch.length === 0) return;
      onBatch?.(batch);
      channel.ack(batch[batch.length - 1], true);
      batch = [];
    };
    const timer = setInterval(flush, 50);
    void channel.prefetch(2000).then(() =>
      channel.consume(queue, (msg) => {
        if (!msg) return;
        if (count++ === 0) first = performance.now();
        batch.push(msg);
        if (batch.length >= 500) flush();
        if (done(msg)) {
          flush();
          clearInterval(timer);
          resolve({ first, last: performance.now(), count });
        }
      }),
    );
  });
}

async function brokerLimits(
  connection: ChannelModel,
): Promise<{ publisherMsgPerSec: number; consumerMsgPerSec: number }> {
  const queue = `bench-bare-${id}`;
  const confirm = await connection.createConfirmChannel();
  await confirm.assertQueue(queue, { durable: true });
  // Same body and the same headers as an interface delivery.
  const uuid = randomUUID();
  const ms = await publishConfirmed(confirm, queue, N, (n) => ({
    index: n,
    messageType: 'OrderPlaced',
    userId: `customer-${n % 97}`,
    contentHash: 'f'.repeat(64),
    serverCorrelationUuid: uuid,
  }));
  const consumer = await connection.createChannel();
  const consumed = await consumeUntil(consumer, queue, (m) => m.properties.messageId === String(N));
  await confirm.deleteQueue(queue);
  await consumer.close();
  await confirm.close();
  return {
    publisherMsgPerSec: rate(N, ms),
    consumerMsgPerSec: rate(consumed.count, consumed.last - consumed.first),
  };
}

async function logHead(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number(
      // The gapless head, or the highest index a concurrent-mode writer drew and committed
      (
        await client.query<{ position: string }>(
          'SELECT greatest((SELECT position FROM log_head WHERE id = 1), (SELECT coalesce(max(index), 0) FROM messages)) AS position',
        )
      ).rows[0].position,
    );
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const db = await createBenchDatabase();
  const connection = await connect(AMQP);
  const input = `bench-input-${id}`;
  const iface = `bench-replay-${id}`;
  const env = {
    DATABASE_URL: db.url,
    AMQP_URL: AMQP,
    ORDINAL_LOG_FORMAT: 'json',
    ORDINAL_DUPLICATE_WINDOW: '0',
    ORDINAL_AMQP_INPUT_QUEUE: input,
  };
  try {
    const broker = await brokerLimits(connection);

    // Input drain: the backlog is queued while the server is down (declared as the server declares it).
    let server = await startChild(
      serverMain,
      { ...env, ORDINAL_AMQP_INPUT_QUEUE: 'off' },
      18601,
      /listening on/,
    );
    await server.stop();
    const before = await logHead(db.url);
    const confirm = await connection.createConfirmChannel();
    await confirm.assertQueue(`${input}.rejected`, { durable: true });
    await confirm.assertQueue(input, {
      durable: true,
      arguments: inputQueueArguments(input, false),
    });
    const fillMs = await publishConfirmed(confirm, input, N, (n) => ({
      messageType: 'OrderPlaced',
      userId: `customer-${n % 97}`,
    }));
    const startedAt = performance.now();
    server = await startChild(serverMain, env, 18602, /listening on/);
    const target = before + 1 + N; // its StartMarker, then the backlog
    let firstAt = 0;
    let firstHead = 0;
    for (;;) {
      const h = await logHead(db.url);
      if (firstAt === 0 && h > before + 1) [firstAt, firstHead] = [performance.now(), h];
      if (h >= target) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const drainMs = performance.now() - startedAt;
    const steadyMs = performance.now() - firstAt;
    await server.stop();

    // Replayable catch-up of the whole log (a new interface starts at index 1).
    const dir = mkdtempSync(join(tmpdir(), 'ordinal-bench-'));
    writeFileSync(
      join(dir, 'interfaces.json'),
      JSON.stringify({ interfaces: [{ name: iface, type: 'replayable', ackBatch: 1000 }] }),
    );
    const head = (await logHead(db.url)) + 1; // the next StartMarker
    const consumer = await connection.createChannel();
    const acks = await connection.createChannel();
    await consumer.assertQueue(`${iface}.sink`, { durable: true });
    await consumer.assertQueue(`${iface}.ack`, { durable: true });
    const replayStarted = performance.now();
    let caughtUpLine = '';
    const replayServer = await startChild(
      serverMain,
      { ...env, ORDINAL_AMQP_INPUT_QUEUE: 'off', ORDINAL_INTERFACES: join(dir, 'interfaces.json') },
      18603,
      /listening on/,
    );
    replayServer.child.stdout!.on('data', (chunk: Buffer) => {
      const m = /catch-up completed[^"]*/.exec(chunk.toString());
      if (m) caughtUpLine = m[0];
    });
    const consumed = await consumeUntil(
      consumer,
      `${iface}.sink`,
      (m) => Number(m.properties.headers!.index) >= head,
      (batch) => {
        const entries = batch.map((m) => ({
          index: Number(m.properties.headers!.index),
          serverCorrelationUuid: m.properties.headers!.serverCorrelationUuid as string,
        }));
        acks.sendToQueue(`${iface}.ack`, Buffer.from(JSON.stringify(entries)));
      },
    );
    const replayTotalMs = performance.now() - replayStarted;
    await new Promise((r) => setTimeout(r, 300));
    await replayServer.stop();
    for (const q of [input, `${input}.rejected`, `${iface}.sink`, `${iface}.ack`])
      await consumer.deleteQueue(q).catch(() => undefined);

    const drain = rate(target - firstHead, steadyMs);
    const catchUp = rate(consumed.count, consumed.last - consumed.first);
    console.log(
      JSON.stringify(
        {
          benchmark: 'amqp',
          machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
          messages: N,
          broker: { ...broker, inputFillMsgPerSec: rate(N, fillMs) },
          inputDrain: {
            msgPerSec: drain,
            fromServerStartMsgPerSec: rate(N, drainMs),
            ms: Math.round(drainMs),
            note: 'msgPerSec: from the first input message committed to the last; fromServerStart includes the server start-up',
          },
          replayableCatchUp: {
            msgPerSec: catchUp,
            delivered: consumed.count,
            firstToLastMs: Math.round(consumed.last - consumed.first),
            fromServerStartMsgPerSec: rate(consumed.count, replayTotalMs),
            log: caughtUpLine,
          },
          ratios: {
            catchUpVsBarePublisher: Number((catchUp / broker.publisherMsgPerSec).toFixed(2)),
            catchUpVsSeed: Number((catchUp / 6500).toFixed(2)),
            drainVsBareConsumer: Number((drain / broker.consumerMsgPerSec).toFixed(2)),
          },
          goals: { catchUpVsBarePublisher: 0.8, catchUpVsSeed: 3, inputDrainMsgPerSec: 10_000 },
        },
        null,
        2,
      ),
    );
  } finally {
    await connection.close().catch(() => undefined);
    await db.drop();
  }
}

await main();
