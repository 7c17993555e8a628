import net from 'node:net';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { startDelayProxy, type DelayProxy } from './delay-proxy.js';

/** An upstream server on loopback that hands each accepted socket to the test. */
async function upstreamServer(): Promise<{
  port: number;
  accepted: Promise<net.Socket>;
  close(): Promise<void>;
}> {
  const server = net.createServer({ allowHalfOpen: true });
  const accepted = once(server, 'connection').then(([socket]) => socket as net.Socket);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    accepted,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Reads from `socket` until `bytes` have come; resolves with them and when the last arrived. */
function readBytes(socket: net.Socket, bytes: number): Promise<{ data: Buffer; at: number }> {
  const chunks: Buffer[] = [];
  let got = 0;
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      got += chunk.length;
      if (got >= bytes) {
        socket.off('data', onData);
        resolve({ data: Buffer.concat(chunks), at: performance.now() });
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

describe('the delay proxy (bench support)', () => {
  let upstream: Awaited<ReturnType<typeof upstreamServer>>;
  let proxy: DelayProxy;
  let client: net.Socket;
  let far: net.Socket;

  beforeEach(async () => {
    upstream = await upstreamServer();
    // As the proxy's own sockets: an end in one direction leaves the other open.
    proxy = await startDelayProxy({ host: '127.0.0.1', port: upstream.port }, { delayMs: 40 });
    client = net.connect({ port: proxy.port, host: '127.0.0.1', allowHalfOpen: true });
    await once(client, 'connect');
    far = await upstream.accepted;
  });

  afterEach(async () => {
    client.destroy();
    far.destroy();
    await proxy.close();
    await upstream.close();
  });

  it('holds each chunk at least the configured delay in both directions and passes the bytes unchanged', async () => {
    const up = randomBytes(256 * 1024);
    const sentUp = performance.now();
    const arrivedUp = readBytes(far, up.length);
    client.write(up);
    const { data: gotUp, at: atUp } = await arrivedUp;
    expect(gotUp.equals(up)).toBe(true);
    expect(atUp - sentUp).toBeGreaterThanOrEqual(39);

    const down = randomBytes(256 * 1024);
    const sentDown = performance.now();
    const arrivedDown = readBytes(client, down.length);
    far.write(down);
    const { data: gotDown, at: atDown } = await arrivedDown;
    expect(gotDown.equals(down)).toBe(true);
    expect(atDown - sentDown).toBeGreaterThanOrEqual(39);

    const seen = proxy.stats();
    expect(seen.upBytes).toBe(up.length);
    expect(seen.downBytes).toBe(down.length);
    expect(seen.roundTrips).toBe(1);
  });

  it('a request and its answer take at least the round trip, and a later request counts another round trip', async () => {
    far.on('data', (chunk: Buffer) => far.write(chunk)); // echo
    for (const n of [1, 2]) {
      const started = performance.now();
      const answer = readBytes(client, 5);
      client.write(`ping${n}`);
      const { data, at } = await answer;
      expect(data.toString()).toBe(`ping${n}`);
      expect(at - started).toBeGreaterThanOrEqual(79);
    }
    expect(proxy.stats().roundTrips).toBe(2);
  });

  it('keeps the order of chunks under jitter', async () => {
    proxy.setDelay({ delayMs: 1, jitterMs: 20 });
    const parts = Array.from({ length: 50 }, (_, i) => `<${i}>`);
    const expected = parts.join('');
    const arrived = readBytes(far, Buffer.byteLength(expected));
    for (const part of parts) {
      client.write(part);
      // Separate chunks: wait until the proxy has read this one before writing the next.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    expect((await arrived).data.toString()).toBe(expected);
  });

  it('passes an end on after the data before it, each way', async () => {
    const arrived = readBytes(far, 4);
    const farEnded = once(far, 'end');
    client.end('last');
    expect((await arrived).data.toString()).toBe('last');
    await farEnded;

    const back = readBytes(client, 3);
    const ended = once(client, 'end');
    far.end('bye');
    expect((await back).data.toString()).toBe('bye');
    await ended;
  });

  it('passes a close of the upstream side on to the client, after the delay', async () => {
    const ended = once(client, 'end');
    const started = performance.now();
    far.destroy();
    await ended;
    expect(performance.now() - started).toBeGreaterThanOrEqual(39);
    const closed = once(client, 'close');
    client.end();
    await closed;
    expect(client.destroyed).toBe(true);
  });

  it('passes a reset of the client on to the upstream side', async () => {
    const ended = once(far, 'end');
    const started = performance.now();
    client.resetAndDestroy();
    await ended;
    expect(performance.now() - started).toBeGreaterThanOrEqual(39);
  });
});
