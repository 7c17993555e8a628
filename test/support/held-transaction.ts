import pg from 'pg';
import { contentHash, LOCKS } from '@ordinal/log/internal';
import { categoryLockKey } from '../../libs/log/src/writer/category-locks.js';

/**
 * A transaction of the test's own on the suite's database, held open on purpose (the scenario
 * of issue 10: a writer that drew a position and has not committed yet). Every method runs on
 * the same connection; `commit`/`rollback` end it and close the connection.
 */
export class HeldTransaction {
  private ended = false;
  private constructor(private readonly client: pg.Client) {}

  static async begin(
    databaseUrl: string,
    applicationName = 'ordinal-test-held',
  ): Promise<HeldTransaction> {
    const client = new pg.Client({
      connectionString: databaseUrl,
      application_name: applicationName,
    });
    client.on('error', () => undefined);
    await client.connect();
    await client.query('BEGIN');
    return new HeldTransaction(client);
  }

  query<R extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<R[]> {
    return this.client.query<R>(text, values).then((r) => r.rows);
  }

  /** The backend's pid (to find the sessions it blocks). */
  async pid(): Promise<number> {
    const [row] = await this.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return row.pid;
  }

  /** Row-locks a stream's head, as another writer of that stream would (an append to it then waits on the row). */
  async lockStreamRow(streamId: string): Promise<void> {
    const rows = await this.query('SELECT version FROM streams WHERE stream_id = $1 FOR UPDATE', [
      streamId,
    ]);
    if (rows.length !== 1) throw new Error(`stream ${streamId} has no head row to lock`);
  }

  /** Takes the gapless log lock (LOCKS.log), as a gapless flush does. */
  async lockLog(): Promise<void> {
    await this.query('SELECT pg_advisory_xact_lock($1::bigint)', [LOCKS.log]);
  }

  /**
   * Draws one position exactly as a concurrent flush does (libs/log/src/writer/flush-strategies.ts
   * `concurrent` + sql/insert-messages.sql.ts `insertConcurrent`): transaction id first, the
   * category's advisory lock, then the INSERT drawing `nextval` after the table lock, the
   * stream head and the NOTIFY (sent at commit). Returns the position drawn.
   */
  async drawPosition(streamId: string, messageType: string, content: unknown): Promise<number> {
    const category = streamId.includes('-') ? streamId.slice(0, streamId.indexOf('-')) : streamId;
    await this.query(
      'SELECT pg_current_xact_id()::text AS xid, pg_advisory_xact_lock($1::bigint)',
      [categoryLockKey(category).toString()],
    );
    const body = JSON.stringify(content);
    const [version] = await this.query<{ version: string }>(
      'SELECT coalesce((SELECT version FROM streams WHERE stream_id = $1), 0)::text AS version',
      [streamId],
    );
    const next = Number(version.version) + 1;
    const [row] = await this.query<{ index: string }>(
      `WITH inserted AS (
         INSERT INTO messages (index, message_type, user_id, stream_id, stream_version, category, body, metadata, schema_version, content_hash, idempotency_key)
         VALUES (nextval('messages_index_seq'), $1, NULL, $2, $3, $4, $5::jsonb, NULL, 1, $6, NULL)
         RETURNING index
       ), heads AS (
         SELECT ordinal_move_stream_heads(ARRAY[$2::text], ARRAY[$3::bigint], ARRAY[$7::bigint]) AS moved
       )
       SELECT inserted.index::text AS index, (SELECT moved FROM heads) AS heads, pg_notify('ordinal_log', inserted.index::text) FROM inserted`,
      [messageType, streamId, next, category, body, contentHash(body), next - 1],
    );
    return Number(row.index);
  }

  async commit(): Promise<void> {
    await this.end('COMMIT');
  }

  async rollback(): Promise<void> {
    await this.end('ROLLBACK');
  }

  private async end(how: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    try {
      await this.client.query(how);
    } finally {
      await this.client.end().catch(() => undefined);
    }
  }
}

/** The sequence's last drawn value (non-transactional: a position drawn by an open transaction shows). */
export async function lastDrawn(
  query: (text: string) => Promise<Record<string, unknown>[]>,
): Promise<number> {
  const [row] = await query(
    `SELECT CASE WHEN is_called THEN last_value ELSE 0 END::text AS drawn FROM messages_index_seq`,
  );
  return Number(row.drawn);
}

/** How many sessions wait for a lock `pid` holds (pg_blocking_pids). */
export async function sessionsBlockedBy(
  query: (text: string, values?: unknown[]) => Promise<Record<string, unknown>[]>,
  pid: number,
): Promise<number> {
  const [row] = await query(
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
    [pid],
  );
  return Number(row.n);
}
