/**
 * The projections benchmark's same-shape baseline (projections.bench.ts, `machine.sameShape`):
 * one process of a workload shaped like the projection's at three processes, with no framework.
 * LOOPS loops each apply EVENTS events one after the other in transactions of BATCH: every event
 * awaits a 1 ms timer (the handler's I/O), spends SPIN_US µs of this process's CPU (what the
 * framework and the handler cost a worker per event) and sends one statement in the batch's
 * transaction that spends about BURN_ROWS rows' worth of its backend's CPU (what an event costs
 * PostgreSQL). Arguments: DATABASE_URL LOOPS EVENTS BATCH SPIN_US BURN_ROWS. Prints `ready` once
 * connected, starts on a line on stdin, prints `done` when every loop is through and closes its
 * connections on the next line (so that their backends' CPU can be read first).
 */
import pg from 'pg';
import { spin } from './spin.js';

const [url, loops, events, batch, spinUs, burnRows] = process.argv.slice(2);
const clients = await Promise.all(
  Array.from({ length: Number(loops) }, async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  }),
);
const nextLine = () => new Promise((resolve) => process.stdin.once('data', resolve));

process.stdout.write('ready\n');
await nextLine();
await Promise.all(
  clients.map(async (client) => {
    for (let done = 0; done < Number(events); done += Number(batch)) {
      await client.query('BEGIN');
      for (let i = 0; i < Math.min(Number(batch), Number(events) - done); i++) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        spin(Number(spinUs));
        await client.query('SELECT count(*) FROM generate_series(1, $1::int)', [Number(burnRows)]);
      }
      await client.query('COMMIT');
    }
  }),
);
process.stdout.write('done\n');
await nextLine();
await Promise.all(clients.map((client) => client.end()));
