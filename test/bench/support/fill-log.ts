import pg from 'pg';

/**
 * Appends `count` order-like messages straight into the log table (a server has created the
 * schema) and moves the head; returns the new head. Only for benchmarks: real writes go
 * through the writer.
 */
export async function fillLog(databaseUrl: string, count: number): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ head: string }>('SELECT position AS head FROM log_head WHERE id = 1 FOR UPDATE');
    const base = Number(rows[0].head);
    await client.query(
      `INSERT INTO messages (index, message_type, user_id, body, metadata, content_hash)
       SELECT $1::bigint + g,
              (ARRAY['OrderPlaced', 'OrderShipped', 'OrderCancelled'])[1 + g % 3],
              'customer-' || (g % 1000),
              jsonb_build_object('orderId', 'o-' || g, 'total', (g % 500) + 0.99,
                'lines', jsonb_build_array(jsonb_build_object('sku', 'SKU-' || (g % 50), 'qty', 1 + g % 3))),
              jsonb_build_object('source', 'bench'),
              md5(g::text)
       FROM generate_series(1, $2::bigint) g`,
      [base, count],
    );
    await client.query('UPDATE log_head SET position = $1 WHERE id = 1', [base + count]);
    await client.query('COMMIT');
    await client.query('VACUUM (ANALYZE) messages');
    return base + count;
  } finally {
    await client.end();
  }
}
