import type { DataSource, QueryRunner } from 'typeorm';
import { execute } from '@ordinal/pg';

/**
 * Runs `work` on a connection of its own that holds the session advisory lock `key` for as
 * long as it runs: one run at a time across every process (the scavenge, the redaction).
 * `busy()` is thrown, and nothing runs, when another session holds the lock.
 */
export async function whileSessionLocked<T>(
  dataSource: DataSource,
  key: number,
  busy: () => Error,
  work: (session: QueryRunner) => Promise<T>,
): Promise<T> {
  const session = dataSource.createQueryRunner();
  await session.connect();
  try {
    const [{ locked }] = await execute<{ locked: boolean }>(session, {
      text: 'SELECT pg_try_advisory_lock($1::bigint) AS locked',
      values: [key],
    });
    if (!locked) throw busy();
    try {
      return await work(session);
    } finally {
      await execute(session, {
        text: 'SELECT pg_advisory_unlock($1::bigint) AS unlocked',
        values: [key],
      }).catch(() => undefined);
    }
  } finally {
    await session.release();
  }
}
