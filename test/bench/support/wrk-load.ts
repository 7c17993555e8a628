import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadResult } from './http-load.js';

/** wrk (C, epoll) costs the machine far less per request than a Node client; used when installed. */
export const WRK = '/usr/bin/wrk';
export const hasWrk = () => existsSync(WRK);

/**
 * `clients` keep-alive connections for `seconds`, each request a fresh body (the Lua script
 * numbers them, so the duplicate window does not skip any): a PUT of one message, or with
 * `batch` a POST of `{"messages":[...]}` carrying that many; with `keyed`, each message with a
 * new idempotency key. `msgPerSec` counts messages.
 */
export function runWrk(options: {
  url: string;
  clients: number;
  seconds: number;
  headers: Record<string, string>;
  bodyPrefix: string;
  batch?: number;
  /** wrk's per-request timeout (its default is 2 s; a timed-out request counts as a failure). */
  timeoutSeconds?: number;
  /** Every message with an idempotency key of its own (never stored before). */
  keyed?: boolean;
}): LoadResult {
  const dir = mkdtempSync(join(tmpdir(), 'ordinal-wrk-'));
  const script = join(dir, 'put.lua');
  const headerLines = Object.entries({ ...options.headers, 'content-type': 'application/json' })
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join('\n');
  const batch = options.batch ?? 0;
  const key = options.keyed
    ? `"idempotencyKey":"${options.bodyPrefix}-' .. t .. '-' .. n .. '",`
    : '';
  const one = `'{${key}"messageType":"OrderPlaced","userId":"customer-' .. (n % 97) .. '","content":{"run":"${options.bodyPrefix}","t":' .. t .. ',"orderId":"o-' .. n .. '","total":49.9}}'`;
  const request =
    batch > 0
      ? `request = function()\n  local parts = {}\n  for i = 1, ${batch} do\n    n = n + 1\n    parts[i] = ${one}\n  end\n  return wrk.format(nil, nil, nil, '{"messages":[' .. table.concat(parts, ',') .. ']}')\nend\n`
      : `request = function()\n  n = n + 1\n  return wrk.format(nil, nil, nil, ${one})\nend\n`;
  writeFileSync(
    script,
    `wrk.method = "${batch > 0 ? 'POST' : 'PUT'}"\n${headerLines}\nlocal n = 0\nlocal t = math.random(1, 1000000000)\n` +
      request +
      `done = function(summary, latency, requests)\n  io.write(string.format("RESULT %d %d %d %d %d\\n", summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.duration, latency:percentile(50), latency:percentile(99)))\nend\n`,
  );
  const run = spawnSync(
    WRK,
    [
      '-t1',
      `-c${options.clients}`,
      `-d${options.seconds}s`,
      ...(options.timeoutSeconds ? ['--timeout', `${options.timeoutSeconds}s`] : []),
      '-s',
      script,
      options.url,
    ],
    { encoding: 'utf8' },
  );
  const m = /RESULT (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(run.stdout ?? '');
  if (!m) throw new Error(`wrk failed: ${run.stderr || run.stdout}`);
  const [requests, errors, durationUs, p50Us, p99Us] = m.slice(1).map(Number);
  const seconds = durationUs / 1e6;
  const ok = (requests - errors) * Math.max(1, batch);
  return {
    clients: options.clients,
    messages: ok,
    failures: errors,
    seconds: Number(seconds.toFixed(3)),
    msgPerSec: Math.round(ok / seconds),
    p50Ms: Number((p50Us / 1000).toFixed(2)),
    p99Ms: Number((p99Us / 1000).toFixed(2)),
  };
}

/** `clients` keep-alive connections GETting `url` for `seconds`: requests a second and latency. */
export function runWrkGet(options: {
  url: string;
  clients: number;
  seconds: number;
  headers: Record<string, string>;
}): LoadResult {
  const dir = mkdtempSync(join(tmpdir(), 'ordinal-wrk-'));
  const script = join(dir, 'get.lua');
  const headerLines = Object.entries(options.headers)
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join('\n');
  writeFileSync(
    script,
    `${headerLines}\n` +
      `local non2xx = 0\nresponse = function(status, headers, body)\n  if status >= 300 then non2xx = non2xx + 1 end\nend\n` +
      `done = function(summary, latency, requests)\n  io.write(string.format("RESULT %d %d %d %d %d\\n", summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.duration, latency:percentile(50), latency:percentile(99)))\nend\n`,
  );
  const run = spawnSync(
    WRK,
    ['-t1', `-c${options.clients}`, `-d${options.seconds}s`, '-s', script, options.url],
    { encoding: 'utf8' },
  );
  const m = /RESULT (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(run.stdout ?? '');
  if (!m) throw new Error(`wrk failed: ${run.stderr || run.stdout}`);
  const [requests, errors, durationUs, p50Us, p99Us] = m.slice(1).map(Number);
  const seconds = durationUs / 1e6;
  const ok = requests - errors;
  return {
    clients: options.clients,
    messages: ok,
    failures: errors,
    seconds: Number(seconds.toFixed(3)),
    msgPerSec: Math.round(ok / seconds),
    p50Ms: Number((p50Us / 1000).toFixed(2)),
    p99Ms: Number((p99Us / 1000).toFixed(2)),
  };
}
