/**
 * The ingest baseline of `bench:ingest` (issue 30), never part of Ordinal: a bare Fastify
 * server whose `PUT /api/events/message` queues the message and answers once it is stored by
 * the same group commit as Ordinal's gapless writer — the same one-statement multi-row insert
 * (`appendBatch`: log lock, head, rows, NOTIFY, in autocommit), flushes started on the next
 * turn of the event loop, up to 4 in flight, another beside those in flight once 64 messages
 * wait or the oldest waited 2 ms — and nothing else: no validation, auth, hashing, metrics,
 * tracing. What is left between it and Ordinal is the cost of those.
 *
 * `SPIN_US` (0): µs of CPU spent on each request before it is queued, in the handler: with
 * Ordinal's CPU per message spun in, it is the same shape as Ordinal (bench:latency's
 * same-shape run), what the machine allows that shape through a delayed database.
 * `SPIN_AFTER_US` (0): µs spent once the message is stored, before the answer (where
 * Ordinal's CPU after a flush goes: answers, metrics, the live router).
 */
import Fastify from 'fastify';
import pg from 'pg';
import { appendBatch, type InsertColumns } from '@ordinal/log/internal';
import { spin } from './spin.js';

const databaseUrl = process.env.DATABASE_URL!;
const port = Number(process.env.PORT ?? 0);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
const MAX_IN_FLIGHT = 4;
const FILL_MESSAGES = 64;
const FILL_WAIT_MS = 2;
const SPIN_US = Number(process.env.SPIN_US ?? 0);
const SPIN_AFTER_US = Number(process.env.SPIN_AFTER_US ?? 0);

interface Pending {
  messageType: string;
  userId: string | null;
  body: string;
  queuedAt: number;
  resolve(stored: { id: number; createdAt: string }): void;
  reject(error: unknown): void;
}

const queue: Pending[] = [];
let inFlight = 0;
let scheduled = false;
let fillTimer: NodeJS.Timeout | null = null;

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    pump();
  });
}

function pump(): void {
  while (inFlight < MAX_IN_FLIGHT && queue.length > 0) {
    if (inFlight > 0 && queue.length < FILL_MESSAGES) {
      const wait = FILL_WAIT_MS - (performance.now() - queue[0].queuedAt);
      if (wait > 0) {
        fillTimer ??= setTimeout(() => {
          fillTimer = null;
          pump();
        }, Math.ceil(wait));
        break;
      }
    }
    const batch = queue.splice(0, 2000);
    inFlight += 1;
    void flush(batch).finally(() => {
      inFlight -= 1;
      schedule();
    });
  }
}

async function flush(batch: Pending[]): Promise<void> {
  const n = batch.length;
  const nulls = () => Array.from({ length: n }, () => null);
  const rows: InsertColumns = {
    index: [],
    messageType: batch.map((p) => p.messageType),
    userId: batch.map((p) => p.userId),
    streamId: nulls(),
    streamVersion: nulls(),
    category: nulls(),
    body: batch.map((p) => p.body),
    metadata: nulls(),
    schemaVersion: batch.map(() => 1),
    contentHash: batch.map(() => ''),
    idempotencyKey: nulls(),
    correlationId: nulls(),
    causationId: nulls(),
    traceparent: nulls(),
  };
  try {
    const statement = appendBatch(rows);
    const { rows: result } = await pool.query<{ base: string; now: Date }>({
      name: 'bare_append_batch',
      text: statement.text,
      values: statement.values,
    });
    const base = Number(result[0].base);
    const createdAt = result[0].now.toISOString();
    batch.forEach((p, i) => p.resolve({ id: base + i + 1, createdAt }));
  } catch (error) {
    for (const p of batch) p.reject(error);
  }
}

const app = Fastify({ bodyLimit: 1024 * 1024 });
app.put('/api/events/message', async (request, reply) => {
  const input = request.body as { messageType: string; userId?: string; content: unknown };
  if (SPIN_US > 0) spin(SPIN_US);
  const body = JSON.stringify(input.content);
  const stored = await new Promise<{ id: number; createdAt: string }>((resolve, reject) => {
    queue.push({
      messageType: input.messageType,
      userId: input.userId ?? null,
      body,
      queuedAt: performance.now(),
      resolve,
      reject,
    });
    schedule();
  });
  if (SPIN_AFTER_US > 0) spin(SPIN_AFTER_US);
  return reply.status(201).send({
    id: stored.id,
    messageType: input.messageType,
    userId: input.userId ?? null,
    content: input.content,
    createdAt: stored.createdAt,
  });
});

const address = await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`listening ${address}\n`);
process.on('SIGTERM', () => {
  void app
    .close()
    .then(() => pool.end())
    .then(() => process.exit(0));
});
