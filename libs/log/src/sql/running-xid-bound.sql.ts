/**
 * A transaction id above every transaction running now, as `xid8` text: what a reader keeps
 * when it passes a position, so that it can later tell that every transaction that could
 * still write there has ended (the snapshot's xmin reaches it).
 *
 * A snapshot's xmax alone is not that bound. PostgreSQL sets it to the latest *completed*
 * id plus one, so a transaction that took its id after the last one to complete is at or
 * above it, and is left out of the snapshot's xmin as well: on a database where nothing
 * completed since, a position would be forgotten while its writer still runs. Every
 * transaction with an id holds an exclusive lock on that id, so the bound is the highest of
 * xmax and each such id plus one. `pg_locks` gives 32-bit ids: each is widened to 64 bits
 * with xmax's epoch (a running id is within 2^31 of xmax, on either side of a wrap).
 */
export const RUNNING_XID_BOUND = `(SELECT greatest(s.xm, coalesce(max(
      (s.xm >> 32 << 32) + l.x + 1
      + CASE WHEN l.x - (s.xm & 4294967295) > 2147483648 THEN -4294967296
             WHEN (s.xm & 4294967295) - l.x > 2147483648 THEN 4294967296 ELSE 0 END), 0))::text
    FROM (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xm) s
    LEFT JOIN (SELECT transactionid::text::bigint AS x FROM pg_locks
               WHERE locktype = 'transactionid' AND mode = 'ExclusiveLock' AND granted) l ON true
    GROUP BY s.xm)`;
