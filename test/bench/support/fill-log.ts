import pg from 'pg';
import { addSegment, segmentTable } from '@ordinal/log/internal';

/**
 * Adds the segments (partitions of messages, docs/storage.md) that positions up to `through`
 * need and the log has not made yet: a fill inserts straight into the table, past the
 * segments the server keeps ahead of its head.
 */
async function coverSegments(client: pg.Client, through: number): Promise<void> {
  const { rows } = await client.query<{ size: string; covered: string }>(
    `SELECT (SELECT segment_size FROM log_segment_settings)::text AS size,
            (SELECT max(end_index) FROM log_segments)::text AS covered`,
  );
  const size = Number(rows[0].size);
  for (let end = Number(rows[0].covered); end <= through; end += size)
    for (const statement of addSegment(segmentTable(end), end, end + size))
      await client.query(statement.text, statement.values);
}

/** How the filled log looks beyond its plain messages. */
export interface FillOptions {
  /** Every `streamEvery`-th message belongs to one of `streams` aggregate streams (category `bench`), with their heads in `streams`. @default none */
  streamEvery?: number;
  streams?: number;
}

/**
 * Appends `count` order-like messages straight into the log table (a server has created the
 * schema) and moves the head; returns the new head. Only for benchmarks: real writes go
 * through the writer.
 */
export async function fillLog(
  databaseUrl: string,
  count: number,
  options: FillOptions = {},
): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ head: string }>(
      'SELECT position AS head FROM log_head WHERE id = 1 FOR UPDATE',
    );
    const base = Number(rows[0].head);
    await coverSegments(client, base + count);
    await client.query(
      `INSERT INTO messages (index, message_type, user_id, body, metadata, content_hash, stream_id, stream_version, category)
       SELECT $1::bigint + g,
              (ARRAY['OrderPlaced', 'OrderShipped', 'OrderCancelled'])[1 + g % 3],
              'customer-' || (g % 1000),
              jsonb_build_object('orderId', 'o-' || g, 'total', (g % 500) + 0.99,
                'lines', jsonb_build_array(jsonb_build_object('sku', 'SKU-' || (g % 50), 'qty', 1 + g % 3))),
              jsonb_build_object('source', 'bench'),
              md5(g::text),
              -- Every streamEvery-th message: the j-th such goes to stream (j-1) % streams as its version (j-1) / streams + 1.
              CASE WHEN $3::bigint > 0 AND g % $3::bigint = 0 THEN 'bench-' || ((g / $3::bigint - 1) % $4::bigint) END,
              CASE WHEN $3::bigint > 0 AND g % $3::bigint = 0 THEN (g / $3::bigint - 1) / $4::bigint + 1 END,
              CASE WHEN $3::bigint > 0 AND g % $3::bigint = 0 THEN 'bench' END
       FROM generate_series(1, $2::bigint) g`,
      [base, count, options.streamEvery ?? 0, options.streams ?? 1],
    );
    if (options.streamEvery && options.streams) {
      await client.query(
        `INSERT INTO streams (stream_id, version) SELECT stream_id, max(stream_version) FROM messages WHERE category = 'bench' GROUP BY stream_id
         ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version`,
      );
    }
    await client.query('UPDATE log_head SET position = $1 WHERE id = 1', [base + count]);
    await client.query('COMMIT');
    await client.query('VACUUM (ANALYZE) messages');
    return base + count;
  } finally {
    await client.end();
  }
}
