import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How long a contender waits for the holder to say its pid. */
const ASK_HOLDER_MS = 2000;

/** An exclusive hold on a data folder, for as long as this process keeps it. */
export interface DataFolderLock {
  release(): Promise<void>;
}

/** Who holds a data folder: the pid the holder gave, or null when it did not answer. */
export type DataFolderHolder = { pid: number | null };

/**
 * The local socket whose name stands for `folder` (a real path). Linux: an abstract socket
 * (no file; the kernel lets one process bind a name and frees it when that process ends, even
 * on kill -9). Windows: a named pipe, with the same guarantees. Elsewhere (macOS): a socket
 * file in the temporary folder; a holder that died leaves the file behind, taken over below.
 */
function endpointOf(folder: string): { path: string; file: boolean } {
  const id = createHash('sha256').update(folder).digest('hex').slice(0, 32);
  if (process.platform === 'linux') return { path: `\0ordinal-pglite-${id}`, file: false };
  if (process.platform === 'win32')
    return { path: `\\\\?\\pipe\\ordinal-pglite-${id}`, file: false };
  return { path: join(tmpdir(), `ordinal-pglite-${id}.sock`), file: true };
}

function listen(server: Server, path: string): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const onError = (error: NodeJS.ErrnoException) => resolve(error);
    server.once('error', onError);
    server.listen(path, () => {
      server.off('error', onError);
      resolve(null);
    });
  });
}

/** Asks the holder of `path` for its pid; `'gone'` when nothing listens there any more. */
function askHolder(path: string): Promise<DataFolderHolder | 'gone'> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    let text = '';
    const done = (answer: DataFolderHolder | 'gone') => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    // A holder whose event loop is busy still owns the name: it is held, pid unknown.
    const timer = setTimeout(() => done({ pid: null }), ASK_HOLDER_MS);
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('end', () => done({ pid: Number(text) > 0 ? Number(text) : null }));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      done(error.code === 'ECONNREFUSED' || error.code === 'ENOENT' ? 'gone' : { pid: null }),
    );
  });
}

/**
 * Takes the data folder `folder` (its real path) for this process, or says who holds it.
 * Node has no `flock`, and a pid file alone is wrong both ways (a pid reused after a crash
 * looks alive; two starts can both find it stale), and a heartbeat lock is stolen from a
 * holder whose event loop is busy. A bound local socket is an OS lock without native code:
 * binding is atomic, exclusive, and undone by the kernel when the holder dies however it dies.
 * The holder answers a connection with its pid, so the refusal can name it.
 */
export async function lockDataFolder(
  folder: string,
): Promise<{ lock: DataFolderLock } | { holder: DataFolderHolder }> {
  const { path, file } = endpointOf(folder);
  for (let attempt = 0; ; attempt++) {
    const server = createServer((socket) => socket.end(String(process.pid)));
    const error = await listen(server, path);
    if (!error) {
      // The lock must not keep a process alive that has nothing else to do.
      server.unref();
      return {
        lock: {
          release: () => new Promise<void>((resolve) => server.close(() => resolve())),
        },
      };
    }
    if (error.code !== 'EADDRINUSE') throw error;
    const holder = await askHolder(path);
    if (holder !== 'gone') return { holder };
    // Only a socket file outlives its holder: remove the dead one's and bind again, once.
    if (!file || attempt > 0) return { holder: { pid: null } };
    rmSync(path, { force: true });
  }
}
