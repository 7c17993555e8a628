/**
 * The batches baseline, run as its own process: `clients` bare `pg` connections, each
 * committing one `rows`-row INSERT after another (autocommit: one statement, one round trip,
 * one commit) into `bench_messages`, a copy of the log's table with its indexes and defaults,
 * for `seconds`. Prints `RESULT {"rows":..,"seconds":..}`.
 *
 *   node pg-insert-load.js <databaseUrl> <clients> <seconds> <rows>
 */
import pg from 'pg';

const [databaseUrl, clientsArg, secondsArg, rowsArg] = process.argv.slice(2);
const clients = Number(clientsArg);
const seconds = Number(secondsArg);
const rowsPerTx = Number(rowsArg);

const COLUMNS = 6;
const placeholders = Array.from(
  { length: rowsPerTx },
  (_, r) => `(${Array.from({ length: COLUMNS }, (_, c) => `$${r * COLUMNS + c + 1}`).join(', ')})`,
).join(', ');
const text = `INSERT INTO bench_messages (index, message_type, user_id, body, schema_version, content_hash) VALUES ${placeholders}`;

async function main(): Promise<void> {
  const setup = new pg.Client({ connectionString: databaseUrl });
  await setup.connect();
  await setup.query('DROP TABLE IF EXISTS bench_messages');
  await setup.query('CREATE TABLE bench_messages (LIKE messages INCLUDING ALL)');
  await setup.end();

  let next = 0;
  let rows = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  const worker = async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      while (performance.now() < deadline) {
        const values: unknown[] = [];
        for (let i = 0; i < rowsPerTx; i++) {
          const n = ++next;
          values.push(
            n,
            'OrderPlaced',
            `customer-${n % 97}`,
            `{"orderId":"o-${n}","total":49.9}`,
            1,
            `h${n.toString(16).padStart(63, '0')}`,
          );
        }
        await client.query({ name: 'bench_insert', text, values });
        rows += rowsPerTx;
      }
    } finally {
      await client.end();
    }
  };
  await Promise.all(Array.from({ length: clients }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const cleanup = new pg.Client({ connectionString: databaseUrl });
  await cleanup.connect();
  await cleanup.query('DROP TABLE bench_messages');
  await cleanup.end();
  console.log(`RESULT ${JSON.stringify({ rows, seconds: Number(elapsed.toFixed(3)) })}`);
}

await main();
