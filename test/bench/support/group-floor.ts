import pg from 'pg';
import { renderClaimed } from '@ordinal/subscriptions/internal';
import { cpuUs } from './proc-cpu.js';

/** PostgreSQL CPU per event (µs) of each step of the least a group does per event. */
export interface GroupFloor {
  pgCpuUsPerEvent: number;
  parts: { add: number; render: number; ack: number };
}

/**
 * The floor under a consumer group's PostgreSQL cost: for `events` of the filled log, in
 * batches of `batch`, one statement each that adds the batch of deliveries already held (as a
 * round_robin read-on hands them out: one row of consumer_group_batches), renders their
 * messages (as a fetch does) and deletes the batch (as an ack of all of it does), on the group
 * tables with their indexes, without anything else a claim does (no lock, expiry, pick, checkpoint, or
 * function). The backend's CPU per event, from /proc; a group (`bench-floor`, not defined)
 * leaves no row behind.
 */
export async function groupFloor(
  databaseUrl: string,
  first: number,
  events: number,
  batch: number,
): Promise<GroupFloor> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // As ordinal_group_claim runs (its settings): index scans, no JIT.
    await client.query('SET enable_seqscan = off; SET enable_bitmapscan = off; SET jit = off');
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const pid = rows[0].pid;
    const spent = { add: 0, render: 0, ack: 0 };
    const step = async (
      part: keyof typeof spent,
      query: string | { text: string; values: unknown[] },
      indices: number[],
    ) => {
      const before = cpuUs(pid);
      if (typeof query === 'string') await client.query(query, [indices]);
      else await client.query(query);
      spent[part] += cpuUs(pid) - before;
    };
    const started = cpuUs(pid);
    for (let from = first; from < first + events; from += batch) {
      const indices = Array.from(
        { length: Math.min(batch, first + events - from) },
        (_, i) => from + i,
      );
      await step(
        'add',
        `INSERT INTO consumer_group_batches (group_name, member_id, epoch, first_index, deadline, indices)
         VALUES ('bench-floor', 'm', 1, ($1::bigint[])[1], clock_timestamp() + interval '1 minute', $1::bigint[])`,
        indices,
      );
      // The render a fetch runs (its statement, its shape for a run of neighbouring positions).
      await step('render', renderClaimed(indices), indices);
      await step(
        'ack',
        `DELETE FROM consumer_group_batches
         WHERE group_name = 'bench-floor' AND member_id = 'm' AND epoch = 1 AND first_index = ($1::bigint[])[1]`,
        indices,
      );
    }
    const perEvent = (us: number) => Number((us / events).toFixed(1));
    return {
      pgCpuUsPerEvent: perEvent(cpuUs(pid) - started),
      parts: {
        add: perEvent(spent.add),
        render: perEvent(spent.render),
        ack: perEvent(spent.ack),
      },
    };
  } finally {
    await client.end();
  }
}
