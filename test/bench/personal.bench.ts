/**
 * `npm run bench:personal` (docs/personal-data.md), the server in its own process
 * (apps/eventstore/dist/main.js), everything in the same run:
 * - publish at 32 clients of messages with two personal fields (sealed with AES-256-GCM under
 *   their subject's key; BENCH_SUBJECTS subjects, default 1,000, their keys made on first use)
 *   beside the same messages of a type without a rule (goal ≥ 0.85×), and with a new subject
 *   in every message (each makes its key);
 * - SSE catch-up of those sealed messages by a reader with the `personal` scope (each field
 *   decrypted) beside a reader without it (PostgreSQL renders the replacements), and beside the
 *   same number of messages without personal data (goal ≥ 0.7×);
 * - erasing one subject while the key store holds 100,000 (median of BENCH_ERASURES erasures;
 *   goal < 50 ms, independent of the log's size).
 * `BENCH_CPU_PROF=<dir>` writes the server's CPU profile there (node --cpu-prof).
 * Prints one JSON object.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createBenchDatabase } from './support/bench-database.js';
import { startChild } from './support/child-server.js';
import { runLoad, type LoadResult } from './support/http-load.js';
import { countStream, type StreamCount } from './support/sse-count.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain = join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const CLIENTS = 32;
const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 10);
const SUBJECTS = Number(process.env.BENCH_SUBJECTS ?? 1000);
const KEYS = 100_000;
const ERASURES = Number(process.env.BENCH_ERASURES ?? 21);
const ADMIN = { authorization: 'Bearer dev-ordinal-token' };
const PRIVY = { authorization: 'Bearer privy-bench-secret' };
const READER = { authorization: 'Bearer reader-bench-secret' };

async function call(baseUrl: string, method: string, path: string, body?: unknown) {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { ...ADMIN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** Publishes `messageType` at 32 clients for LOAD_SECONDS: two personal-looking fields each. */
function publishLoad(
  baseUrl: string,
  messageType: string,
  subject: (n: number) => string = (n) => `c-${n % SUBJECTS}`,
): Promise<LoadResult> {
  return runLoad({
    url: `${baseUrl}/api/events/message`,
    clients: CLIENTS,
    total: Number.MAX_SAFE_INTEGER,
    maxSeconds: LOAD_SECONDS,
    headers: ADMIN,
    body: (n) =>
      JSON.stringify({
        messageType,
        content: {
          customerId: subject(n),
          email: `person-${n}@example.com`,
          address: { street: `${n} Long Road`, city: 'Lyon' },
          plan: 'gold',
        },
      }),
  });
}

async function head(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ h: string }>('SELECT max(index)::text AS h FROM messages');
  return Number(rows[0].h);
}

/**
 * The machine's own ceiling for a decrypting catch-up: one AES-256-GCM open (the server's box:
 * 12-byte IV, 16-byte tag, AAD) of two fields' JSON, the least a reader with the `personal`
 * scope pays per message on top of the plain catch-up, in µs (best of 5 rounds of 20,000).
 */
function openMicros(): number {
  const key = randomBytes(32);
  const aad = 'fields:c-1:/email,/address';
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const plain = JSON.stringify(['person-1@example.com', { street: '1 Long Road', city: 'Lyon' }]);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  const tag = cipher.getAuthTag();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    for (let i = 0; i < 20_000; i++) {
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(Buffer.from(aad));
      decipher.setAuthTag(tag);
      Buffer.concat([decipher.update(body), decipher.final()]);
    }
    best = Math.min(best, ((performance.now() - started) * 1000) / 20_000);
  }
  return best;
}

/** The best of three catch-ups of `[from, to]` (the first warms the caches). */
async function catchUp(
  baseUrl: string,
  headers: Record<string, string>,
  from: number,
  to: number,
): Promise<StreamCount & { msgPerSec: number }> {
  const agent = new http.Agent({ keepAlive: false });
  let best: StreamCount | null = null;
  for (let i = 0; i < 3; i++) {
    const run = await countStream(baseUrl, headers, from, to, agent);
    if (best === null || run.ms < best.ms) best = run;
  }
  return {
    ...best!,
    ms: Math.round(best!.ms),
    msgPerSec: Math.round(best!.messages / (best!.ms / 1000)),
  };
}

async function main(): Promise<void> {
  const db = await createBenchDatabase();
  const server = await startChild(
    serverMain,
    {
      ORDINAL_ENV: 'development',
      DATABASE_URL: db.url,
      ORDINAL_LOG_FORMAT: 'json',
      ORDINAL_DUPLICATE_WINDOW: '0',
      ORDINAL_MASTER_KEY: randomBytes(32).toString('base64'),
      ORDINAL_TOKENS: 'privy:privy-bench-secret:read+personal;reader:reader-bench-secret:read',
      AMQP_URL: '',
    },
    19200 + Math.floor(Math.random() * 300),
    /listening on/,
    process.env.BENCH_CPU_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
      : [],
  );
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await call(server.baseUrl, 'PUT', '/api/personal-data/rules/CustomerRegistered', {
      subject: '/customerId',
      fields: ['/email', '/address'],
    });
    // Publish: a warm-up, then the plain type and the ruled one, then plain again (the better
    // plain run is the baseline, so a machine that warms up does not flatter the ratio).
    await publishLoad(server.baseUrl, 'Warmup');
    const plainFrom = (await head(client)) + 1;
    const plain = await publishLoad(server.baseUrl, 'CustomerPlain');
    const plainTo = await head(client);
    const sealed = await publishLoad(server.baseUrl, 'CustomerRegistered');
    const sealedTo = await head(client);
    // Every message a new subject: each makes its key (one key-store insert per flush of them)
    const firstUse = await publishLoad(server.baseUrl, 'CustomerRegistered', (n) => `new-${n}`);
    const plainAgain = await publishLoad(server.baseUrl, 'CustomerPlain');
    const baseline = plainAgain.msgPerSec > plain.msgPerSec ? plainAgain : plain;
    // Catch-up over the same number of messages: sealed with and without the personal scope,
    // and plain ones (no personal data on the path at all)
    const count = Math.min(plainTo - plainFrom + 1, sealedTo - plainTo);
    const sealedFrom = plainTo + 1;
    const decrypting = await catchUp(server.baseUrl, PRIVY, sealedFrom, sealedFrom + count - 1);
    const redacted = await catchUp(server.baseUrl, READER, sealedFrom, sealedFrom + count - 1);
    const plainSse = await catchUp(server.baseUrl, PRIVY, plainFrom, plainFrom + count - 1);
    // Erasure with 100,000 subjects in the key store
    const have = Number(
      (
        await client.query<{ n: string }>(
          'SELECT count(*)::text AS n FROM ordinal_keys.subject_keys',
        )
      ).rows[0].n,
    );
    // (filler keys: erasing never opens a key, so random bytes stand in for wrapped ones)
    await client.query(
      `INSERT INTO ordinal_keys.subject_keys (subject_hash, wrapped_key)
       SELECT encode(sha256(('filler-' || g)::bytea), 'hex'), decode(md5(g::text) || md5(g::text || 'x'), 'hex')
       FROM generate_series(1, $1::int) g`,
      [Math.max(0, KEYS - have)],
    );
    const erasures: number[] = [];
    for (let i = 0; i < ERASURES; i++) {
      const started = performance.now();
      await call(server.baseUrl, 'POST', `/api/subjects/c-${i}/erase`, { reason: 'bench' });
      erasures.push(performance.now() - started);
    }
    erasures.sort((a, b) => a - b);
    const open = openMicros();
    const median = erasures[Math.floor(erasures.length / 2)];
    console.log(
      JSON.stringify(
        {
          benchmark: 'personal',
          date: new Date().toISOString(),
          machine: { cpus: cpus().length, node: process.version, loadAverage1m: loadavg()[0] },
          publish: {
            clients: CLIENTS,
            subjects: SUBJECTS,
            withoutRules: baseline,
            withTwoPersonalFields: sealed,
            ratio: Number((sealed.msgPerSec / baseline.msgPerSec).toFixed(2)),
            goal: 0.85,
            everyMessageANewSubject: firstUse,
            ratioNewSubjects: Number((firstUse.msgPerSec / baseline.msgPerSec).toFixed(2)),
          },
          sseCatchUp: {
            messages: count,
            sealedWithPersonalScope: decrypting,
            sealedWithoutPersonalScope: redacted,
            withoutPersonalData: plainSse,
            ratioDecryptingToPlain: Number((decrypting.msgPerSec / plainSse.msgPerSec).toFixed(2)),
            ratioRedactedToPlain: Number((redacted.msgPerSec / plainSse.msgPerSec).toFixed(2)),
            goal: 0.7,
            // What one core allows: the plain catch-up's µs per message plus one AES-GCM open.
            openMicros: Number(open.toFixed(2)),
            ceilingRatio: Number(
              (1e6 / plainSse.msgPerSec / (1e6 / plainSse.msgPerSec + open)).toFixed(2),
            ),
            fractionOfCeiling: Number(
              (
                decrypting.msgPerSec /
                plainSse.msgPerSec /
                (1e6 / plainSse.msgPerSec / (1e6 / plainSse.msgPerSec + open))
              ).toFixed(2),
            ),
          },
          erasure: {
            keysInStore: Math.max(KEYS, have),
            logMessages: await head(client),
            erasures: ERASURES,
            medianMs: Number(median.toFixed(1)),
            maxMs: Number(erasures[erasures.length - 1].toFixed(1)),
            goalMs: 50,
          },
        },
        null,
        2,
      ),
    );
  } finally {
    await client.end();
    await server.stop();
    await db.drop();
  }
}

await main();
