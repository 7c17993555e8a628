import pg from 'pg';
import { MESSAGE_COLUMNS, TABLES } from '@ordinal/log/internal';

/** The baseline (B2): a bare pg client paging the table with the reader's own query. */
export async function pagePg(
  databaseUrl: string,
  head: number,
): Promise<{ rows: number; ms: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const started = performance.now();
    let rows = 0;
    for (let from = 1; from <= head;) {
      // The reader's page query (libs/log/src/sql/read-page.sql.ts), unfiltered.
      const result = await client.query<{ index: string }>(
        `SELECT ${MESSAGE_COLUMNS} FROM ${TABLES.messages} WHERE index >= $1 AND index <= $2 ORDER BY index LIMIT $3`,
        [from, head, 1000],
      );
      if (result.rows.length === 0) break;
      rows += result.rows.length;
      from = Number(result.rows[result.rows.length - 1].index) + 1;
    }
    return { rows, ms: performance.now() - started };
  } finally {
    await client.end();
  }
}
