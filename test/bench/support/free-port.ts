import { createServer } from 'node:net';

/** A port nobody listens on now on 127.0.0.1 (other benchmarks and suites may run on this machine at the same time). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
