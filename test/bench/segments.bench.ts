/**
 * `npm run bench:segments` (docs/storage.md): converting an existing log of BENCH_ROWS messages
 * (default 5,000,000; every 10th in one of 10,000 aggregate streams, every 100th with an
 * idempotency key) to segments, the migration `Segments1766100000000` alone, timed (writers are
 * stopped for this long), beside a bare `CREATE TABLE … AS SELECT * FROM messages` of the same
 * rows in the same run (the baseline: what copying the log would cost); and the log's size on
 * disk (tables, indexes, TOAST) before and after. Prints one JSON object.
 */
import { cpus, loadavg } from 'node:os';
import { DataSource } from 'typeorm';
import { OWNERSHIP_MIGRATIONS } from '@ordinal/ownership';
import { runMigrations } from '@ordinal/pg';
import { LOG_MIGRATIONS } from '@ordinal/log/internal';
import { createBenchDatabase } from './support/bench-database.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 5_000_000);
const SEGMENTS = 'Segments1766100000000';

const logBytes = `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::text AS bytes
  FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
    AND (c.relname = 'messages' OR c.relname LIKE 'messages\\_%' OR c.relname = 'message_keys')`;

async function main(): Promise<void> {
  const db = await createBenchDatabase();
  const dataSource = new DataSource({ type: 'postgres', url: db.url });
  await dataSource.initialize();
  try {
    const log = LOG_MIGRATIONS.slice(
      0,
      LOG_MIGRATIONS.findIndex((m) => new m().name === SEGMENTS),
    );
    const before = [...OWNERSHIP_MIGRATIONS, ...log];
    await runMigrations(dataSource, before);
    const filled = performance.now();
    await dataSource.query(
      `INSERT INTO messages (index, message_type, user_id, body, metadata, content_hash, stream_id, stream_version, category, idempotency_key)
       SELECT g, (ARRAY['OrderPlaced', 'OrderShipped', 'OrderCancelled'])[1 + g % 3], 'customer-' || (g % 1000),
              jsonb_build_object('orderId', 'o-' || g, 'total', (g % 500) + 0.99), jsonb_build_object('source', 'bench'),
              md5(g::text),
              CASE WHEN g % 10 = 0 THEN 'order-' || (g / 10 % 10000) END,
              CASE WHEN g % 10 = 0 THEN g / 100000 + 1 END,
              CASE WHEN g % 10 = 0 THEN 'order' END,
              CASE WHEN g % 100 = 0 THEN 'key-' || g END
       FROM generate_series(1, $1::bigint) g`,
      [ROWS],
    );
    await dataSource.query(
      `INSERT INTO streams (stream_id, version) SELECT stream_id, max(stream_version) FROM messages WHERE stream_id IS NOT NULL GROUP BY stream_id`,
    );
    await dataSource.query(`UPDATE log_head SET position = $1 WHERE id = 1`, [ROWS]);
    await dataSource.query('VACUUM (ANALYZE) messages');
    const fillMs = performance.now() - filled;
    const [{ bytes: bytesBefore }] = await dataSource.query<{ bytes: string }[]>(logBytes);

    // The baseline: copying the log (what a conversion that copies would at least cost).
    const copied = performance.now();
    await dataSource.query('CREATE TABLE bench_copy AS SELECT * FROM messages');
    const copyMs = performance.now() - copied;
    await dataSource.query('DROP TABLE bench_copy');
    await dataSource.query('CHECKPOINT');

    const converted = performance.now();
    const applied = await runMigrations(dataSource, [
      ...OWNERSHIP_MIGRATIONS,
      ...LOG_MIGRATIONS.slice(0, log.length + 1),
    ]);
    const convertMs = performance.now() - converted;
    if (applied.join() !== SEGMENTS) throw new Error(`applied ${applied.join()}, not ${SEGMENTS}`);
    const [{ bytes: bytesAfter }] = await dataSource.query<{ bytes: string }[]>(logBytes);
    const [{ rows, first }] = await dataSource.query<{ rows: number; first: string }[]>(
      `SELECT count(*)::int AS rows, (SELECT table_name FROM log_segments ORDER BY first_index LIMIT 1) AS first FROM messages`,
    );
    if (rows !== ROWS) throw new Error(`${rows} rows after the conversion, not ${ROWS}`);

    process.stdout.write(
      JSON.stringify(
        {
          bench: 'segments',
          machine: { cpus: cpus().length, load: loadavg()[0] },
          rows: ROWS,
          fillSeconds: Math.round(fillMs / 100) / 10,
          conversion: {
            seconds: Math.round(convertMs / 100) / 10,
            firstSegment: first,
          },
          baselineCopySeconds: Math.round(copyMs / 100) / 10,
          conversionOverCopy: Math.round((convertMs / copyMs) * 100) / 100,
          logBytes: { before: Number(bytesBefore), after: Number(bytesAfter) },
        },
        null,
        2,
      ) + '\n',
    );
  } finally {
    await dataSource.destroy();
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
