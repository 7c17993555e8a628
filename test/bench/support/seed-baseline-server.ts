/**
 * The seed's write path, for comparison only (never part of Ordinal): a bare Fastify server
 * whose handler takes one process-wide mutex, then per message BEGIN, max(index)+1, INSERT,
 * COMMIT, exactly as EventStore's `synchronized ingest` does. A lighter HTTP stack than
 * Ordinal's, so the comparison favours the baseline.
 */
import Fastify from 'fastify';
import pg from 'pg';
import { createHash } from 'node:crypto';

const databaseUrl = process.env.DATABASE_URL!;
const port = Number(process.env.PORT ?? 0);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
let chain: Promise<unknown> = Promise.resolve();
const mutex = <T>(work: () => Promise<T>): Promise<T> => {
  const run = chain.then(work, work);
  chain = run.catch(() => undefined);
  return run;
};

const app = Fastify({ bodyLimit: 1024 * 1024 });
app.put('/api/events/message', async (request, reply) => {
  const input = request.body as { messageType: string; userId?: string; content: unknown };
  if (!input?.messageType || typeof input.content !== 'object')
    return reply.status(400).send({ message: 'bad' });
  const body = JSON.stringify(input.content);
  const hash = createHash('sha256').update(body).digest('hex');
  const stored = await mutex(async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ next: string }>(
        'SELECT coalesce(max(index), 0) + 1 AS next FROM messages',
      );
      const next = Number(rows[0].next);
      await client.query(
        'INSERT INTO messages (index, message_type, user_id, body, content_hash) VALUES ($1, $2, $3, $4, $5)',
        [next, input.messageType, input.userId ?? null, body, hash],
      );
      await client.query('COMMIT');
      return {
        id: next,
        messageType: input.messageType,
        userId: input.userId ?? null,
        body: input.content,
        contentHash: hash,
      };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  });
  return reply.status(201).send(stored);
});

const address = await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`listening ${address}\n`);
process.on('SIGTERM', () => {
  void app
    .close()
    .then(() => pool.end())
    .then(() => process.exit(0));
});
