import http from 'node:http';

/** Result of one load phase: throughput and latency percentiles. */
export interface LoadResult {
  clients: number;
  messages: number;
  failures: number;
  seconds: number;
  msgPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * `clients` keep-alive connections, each sending one request after another (closed loop),
 * until `total` requests are done or `maxSeconds` pass.
 */
export async function runLoad(options: {
  url: string;
  clients: number;
  total: number;
  maxSeconds: number;
  headers: Record<string, string>;
  body: (n: number) => string;
  method?: string;
}): Promise<LoadResult> {
  const target = new URL(options.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.clients });
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  const deadline = started + options.maxSeconds * 1000;
  const send = (n: number) =>
    new Promise<number>((resolve, reject) => {
      const body = options.body(n);
      const req = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: options.method ?? 'PUT',
          headers: {
            ...options.headers,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const client = async () => {
    while (next < options.total && performance.now() < deadline) {
      const n = next++;
      const t0 = performance.now();
      const status = await send(n).catch(() => 0);
      latencies.push(performance.now() - t0);
      if (status < 200 || status >= 300) failures++;
    }
  };
  await Promise.all(Array.from({ length: options.clients }, client));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const ok = latencies.length - failures;
  return {
    clients: options.clients,
    messages: ok,
    failures,
    seconds: Number(seconds.toFixed(3)),
    msgPerSec: Math.round(ok / seconds),
    p50Ms: Number(percentile(latencies, 50).toFixed(2)),
    p99Ms: Number(percentile(latencies, 99).toFixed(2)),
  };
}
