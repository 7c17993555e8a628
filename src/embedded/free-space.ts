import { statfsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Free space PGlite needs before it is opened again after running out: a write-ahead log
 * segment (16 MiB, written whole when the log moves to a new one) and some room for tables.
 */
export const REOPEN_FREE_BYTES = 20 * 1024 * 1024;

/** Free bytes where the data folder and its write-ahead log live (often one disk, maybe two). */
export function freeSpace(dataDir: string): { path: string; bytes: number }[] {
  return [dataDir, join(dataDir, 'pg_wal')].flatMap((path) => {
    try {
      const { bavail, bsize } = statfsSync(path);
      return [{ path, bytes: bavail * bsize }];
    } catch {
      return [];
    }
  });
}

/** Whether every disk of the data folder has at least `bytes` free. */
export function hasFreeSpace(dataDir: string, bytes = REOPEN_FREE_BYTES): boolean {
  return freeSpace(dataDir).every((disk) => disk.bytes >= bytes);
}

/** "12.0 MiB free in /x, 0.4 MiB in /x/pg_wal", for messages. */
export function describeFreeSpace(dataDir: string): string {
  return freeSpace(dataDir)
    .map(
      (disk, i) =>
        `${(disk.bytes / 1024 / 1024).toFixed(1)} MiB${i === 0 ? ' free' : ''} in ${disk.path}`,
    )
    .join(', ');
}
