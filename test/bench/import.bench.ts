/**
 * `npm run bench:import`: bulk import of BENCH_IMPORT_MESSAGES (default 1,000,000) messages
 * from an NDJSON file with `ordinal publish --file` (the CLI in its own process, the server in
 * another, default settings), in gapless and then concurrent mode, each on a fresh log.
 * Baseline in the same run: a bare pg `COPY` of the same rows (already checked, serialised
 * and hashed) into a table like `messages` (same columns, defaults, constraints and indexes).
 * After each import it checks the range is gap-free and the safe head reached it. Prints JSON.
 */
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { copyImportRows, importRowText, parseImportLine } from '@ordinal/log/internal';
import { createBenchDatabase } from './support/bench-database.js';

// What the server stores for every imported message: one correlation for the import (a UUID).
const BASELINE_CORRELATION = '6f1c2b7e-3d4a-4f5b-9c8d-0e1f2a3b4c5d';
import { startChild } from './support/child-server.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const serverMain = join(root, 'apps', 'eventstore', 'dist', 'main.js');
const cliMain = join(root, 'src', 'bin', 'ordinal.mjs');
const MESSAGES = Number(process.env.BENCH_IMPORT_MESSAGES ?? 1_000_000);
const TOKEN = 'dev-ordinal-token';

const rate = (messages: number, ms: number) => Math.round((messages / ms) * 1000);

/** The same order-like messages as fill-log.ts, as NDJSON lines. */
function lineOf(g: number): string {
  const types = ['OrderPlaced', 'OrderShipped', 'OrderCancelled'];
  return JSON.stringify({
    messageType: types[g % 3],
    userId: `customer-${g % 1000}`,
    content: {
      orderId: `o-${g}`,
      total: (g % 500) + 0.99,
      lines: [{ sku: `SKU-${g % 50}`, qty: 1 + (g % 3) }],
    },
    metadata: { source: 'bench' },
  });
}

async function writeFiles(dir: string): Promise<{ ndjson: string; copy: string; bytes: number }> {
  const ndjson = join(dir, 'import.ndjson');
  const copy = join(dir, 'import.copy');
  const a = createWriteStream(ndjson);
  const b = createWriteStream(copy);
  let bytes = 0;
  for (let g = 1; g <= MESSAGES; g += 10_000) {
    let text = '';
    let rows = '';
    for (let i = g; i < Math.min(g + 10_000, MESSAGES + 1); i++) {
      const line = lineOf(i);
      text += line + '\n';
      const p = parseImportLine(line);
      rows += importRowText({
        index: i,
        messageType: p.message.messageType,
        userId: p.message.userId ?? null,
        bodyJson: p.bodyJson,
        metadataJson: p.metadataJson,
        contentHash: p.hash,
        idempotencyKey: null,
        correlationId: BASELINE_CORRELATION,
        causationId: BASELINE_CORRELATION,
        traceparent: null,
      });
    }
    bytes += Buffer.byteLength(text);
    if (!a.write(text)) await new Promise<void>((r) => a.once('drain', () => r()));
    if (!b.write(rows)) await new Promise<void>((r) => b.once('drain', () => r()));
  }
  await Promise.all([
    new Promise<void>((r) => a.end(() => r())),
    new Promise<void>((r) => b.end(() => r())),
  ]);
  return { ndjson, copy, bytes };
}

/** The baseline: COPY of the prepared rows into an empty table like `messages`, committed. */
async function bareCopy(databaseUrl: string, file: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('DROP TABLE IF EXISTS import_baseline');
    await client.query('CREATE TABLE import_baseline (LIKE messages INCLUDING ALL)');
    await client.query('CHECKPOINT');
    const started = performance.now();
    await client.query('BEGIN');
    await pipeline(
      createReadStream(file, { highWaterMark: 256 * 1024 }),
      client.query(copyFrom(copyImportRows('import_baseline'))),
    );
    await client.query('COMMIT');
    return performance.now() - started;
  } finally {
    await client.query('DROP TABLE IF EXISTS import_baseline').catch(() => undefined);
    await client.end();
  }
}

function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cliMain, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

async function importOnce(ordering: 'gapless' | 'concurrent', file: string, copyFile: string) {
  const db = await createBenchDatabase();
  const server = await startChild(
    serverMain,
    {
      ORDINAL_ENV: 'development',
      DATABASE_URL: db.url,
      ORDINAL_LOG_FORMAT: 'json',
      ORDINAL_ORDERING: ordering,
    },
    18900 + Math.floor(Math.random() * 90),
    /listening on/,
  );
  try {
    const baselineMs = await bareCopy(db.url, copyFile);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query('CHECKPOINT');
    const started = performance.now();
    const r = await runCli(['publish', '--file', file], {
      ORDINAL_URL: server.baseUrl,
      ORDINAL_TOKEN: TOKEN,
    });
    const ms = performance.now() - started;
    if (r.code !== 0) throw new Error(`import failed (${r.code}): ${r.stderr}`);
    const range = /indices (\d+)\.\.(\d+)/.exec(r.stdout);
    if (!range) throw new Error(`no range in ${r.stdout}`);
    const [first, last] = [Number(range[1]), Number(range[2])];
    const { rows } = await client.query<{ n: string; lo: string; hi: string }>(
      'SELECT count(*) AS n, min(index) AS lo, max(index) AS hi FROM messages WHERE index BETWEEN $1 AND $2',
      [first, last],
    );
    const gapFree = Number(rows[0].n) === MESSAGES && last - first + 1 === MESSAGES;
    // The safe head reaches the end of the range (concurrent mode: the watermark scans it)
    const watermarkStarted = performance.now();
    let head = 0;
    while (performance.now() - watermarkStarted < 120_000) {
      head = (
        (await (
          await fetch(`${server.baseUrl}/api/events/head`, {
            headers: { authorization: `Bearer ${TOKEN}` },
          })
        ).json()) as { head: number }
      ).head;
      if (head >= last) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await client.end();
    return {
      ordering,
      ordinal: { ms: Math.round(ms), msgPerSec: rate(MESSAGES, ms) },
      baseline: { ms: Math.round(baselineMs), rowsPerSec: rate(MESSAGES, baselineMs) },
      ratio: Number((baselineMs / ms).toFixed(2)),
      gapFree,
      safeHeadReachedLast: head >= last,
      safeHeadAfterMs: Math.round(performance.now() - watermarkStarted),
    };
  } finally {
    await server.stop();
    await db.drop();
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ordinal-bench-import-'));
  try {
    const loadBefore = loadavg();
    const files = await writeFiles(dir);
    const runs = [];
    for (const ordering of ['gapless', 'concurrent'] as const)
      runs.push(await importOnce(ordering, files.ndjson, files.copy));
    console.log(
      JSON.stringify(
        {
          benchmark: 'import',
          date: new Date().toISOString(),
          messages: MESSAGES,
          fileBytes: files.bytes,
          command: 'npm run bench:import',
          machine: {
            cpus: cpus().length,
            model: cpus()[0]?.model,
            loadavgBefore: loadBefore.map((l) => Number(l.toFixed(2))),
            loadavgAfter: loadavg().map((l) => Number(l.toFixed(2))),
          },
          goal: 'ordinal msgPerSec >= 80000, gap-free',
          runs,
        },
        null,
        2,
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
