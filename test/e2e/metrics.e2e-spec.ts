import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';
import {
  brokerUrl,
  connectTestBroker,
  uniqueName,
  type TestBroker,
} from '../support/amqp-broker.js';

interface Family {
  name: string;
  help?: string;
  type?: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

/**
 * A strict parser of Prometheus's text exposition format (0.0.4): every line is a HELP, a TYPE
 * or a sample; HELP and TYPE come once per family, before its samples; label values are quoted
 * with the format's escapes; values are floats or ±Inf/NaN. Anything else throws, naming the line.
 */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const sampleLine = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
  const familyOf = (sample: string) => {
    for (const suffix of ['_bucket', '_sum', '_count', '']) {
      const base = suffix && sample.endsWith(suffix) ? sample.slice(0, -suffix.length) : sample;
      const f = families.get(base);
      if (f && (suffix === '' || f.type === 'histogram' || f.type === 'summary')) return f;
    }
    throw new Error(`sample ${sample} has no HELP/TYPE before it`);
  };
  text.split('\n').forEach((line, n) => {
    const where = `line ${n + 1}: ${line}`;
    if (line === '') return;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      if (!new RegExp(`^${NAME}$`).test(name)) throw new Error(`bad metric name, ${where}`);
      let f = families.get(name);
      if (!f) families.set(name, (f = { name, samples: [] }));
      if (f.samples.length > 0) throw new Error(`${kind} after samples, ${where}`);
      if (kind === 'HELP') {
        if (f.help !== undefined) throw new Error(`second HELP, ${where}`);
        f.help = rest;
      } else {
        if (f.type !== undefined) throw new Error(`second TYPE, ${where}`);
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest))
          throw new Error(`bad TYPE, ${where}`);
        f.type = rest;
      }
      return;
    }
    if (line.startsWith('#')) return;
    const m = sampleLine.exec(line);
    if (!m) throw new Error(`not a sample, ${where}`);
    const [, name, labelText = '', valueText] = m;
    const labels: Record<string, string> = {};
    let rest = labelText;
    while (rest.length > 0) {
      const l = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/.exec(rest);
      if (!l) throw new Error(`bad labels, ${where}`);
      if (l[1] in labels) throw new Error(`repeated label, ${where}`);
      labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      rest = rest.slice(l[0].length);
    }
    if (!/^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)|[+-]Inf|NaN)$/.test(valueText))
      throw new Error(`bad value, ${where}`);
    const value =
      valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : Number(valueText);
    familyOf(name).samples.push({ name, labels, value });
  });
  return families;
}

const PROMTOOL = '/usr/bin/promtool';

describe('/metrics follows Prometheus conventions (H3, O1)', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  let server: TestServer;
  const inputQueue = uniqueName('metrics-input');

  beforeAll(async () => {
    db = await createTestDatabase();
    broker = await connectTestBroker();
    server = await startServer(db.url, {
      AMQP_URL: brokerUrl(),
      ORDINAL_AMQP_INPUT_QUEUE: inputQueue,
    });
  });
  afterAll(async () => {
    await server?.close();
    await broker?.deleteQueues(inputQueue, `${inputQueue}.rejected`);
    await broker?.close();
    await db?.drop();
  });

  const scrape = async () => {
    const res = await fetch(`${server.baseUrl}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    // Prometheus's own linter, where Debian's prometheus package is installed (.ci/run installs it)
    if (existsSync(PROMTOOL)) {
      const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect([check.status, check.stdout + check.stderr]).toEqual([0, '']);
    }
    return parseExposition(text);
  };

  it('parses strictly, and every family keeps the naming rules', async () => {
    // Given some traffic: a publish, a read, a 404 and a 400
    await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'M',
      content: { n: 1 },
    });
    await http(server.baseUrl, 'GET', '/api/events/2');
    await http(server.baseUrl, 'GET', '/nowhere');
    await http(server.baseUrl, 'GET', '/api/events/x');
    // When /metrics is scraped
    const families = await scrape();
    // Then every family has HELP and TYPE and samples that fit its type
    const deprecatedGauges = new Set([
      'ordinal_amqp_reconnections',
      'ordinal_router_mailbox_overflows',
      'ordinal_router_database_reads',
      'ordinal_router_late_deliveries',
      'ordinal_subscription_late_delivered',
    ]);
    for (const f of families.values()) {
      expect([f.name, typeof f.help, typeof f.type]).toEqual([f.name, 'string', 'string']);
      // Counters end in _total, and nothing else does (prom-client's nodejs_active_*_total gauges are not exported)
      expect([f.name, f.name.endsWith('_total')]).toEqual([f.name, f.type === 'counter']);
      // Base units: seconds and bytes, never milliseconds
      expect(f.name).not.toMatch(/_(ms|milliseconds|microseconds)(_|$)/);
      if (f.type === 'histogram') {
        const series = new Set(
          f.samples.filter((s) => s.name.endsWith('_count')).map((s) => JSON.stringify(s.labels)),
        );
        for (const key of series) {
          const labels = JSON.parse(key) as Record<string, string>;
          const same = (s: { labels: Record<string, string> }) =>
            Object.entries(labels).every(([k, v]) => s.labels[k] === v);
          const buckets = f.samples.filter((s) => s.name === `${f.name}_bucket` && same(s));
          expect(buckets.at(-1)?.labels.le).toBe('+Inf');
          expect(buckets.at(-1)?.value).toBe(
            f.samples.find((s) => s.name === `${f.name}_count` && same(s))?.value,
          );
          expect(f.samples.some((s) => s.name === `${f.name}_sum` && same(s))).toBe(true);
        }
      }
      if (f.name.startsWith('ordinal_') && f.type === 'gauge' && !deprecatedGauges.has(f.name)) {
        // A gauge named like a running count of events is a counter exported the wrong way
        expect(f.name).not.toMatch(/_(reconnections|reads|overflows|deliveries|delivered)$/);
      }
    }
    // And the standard Node and process names are there, without a prefix of ours
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect([name, families.has(name)]).toEqual([name, true]);
    }
    expect([...families.keys()].filter((n) => n.startsWith('ordinal_process_'))).toEqual([]);
    // And the counters the old gauges stood for exist
    for (const name of [
      'ordinal_amqp_reconnections_total',
      'ordinal_router_mailbox_overflows_total',
      'ordinal_router_database_reads_total',
      'ordinal_router_late_deliveries_total',
      'ordinal_subscription_late_delivered_total',
    ]) {
      expect([name, families.get(name)?.type]).toEqual([name, 'counter']);
    }
  });

  it('has labelled series from the start, and HTTP request durations by route and status', async () => {
    const families = await scrape();
    // A labelled counter shows every label value before its first event
    const flushes = families.get('ordinal_flushes_total')!;
    expect(flushes.samples.find((s) => s.labels.outcome === 'failed')).toMatchObject({ value: 0 });
    expect(flushes.samples.find((s) => s.labels.outcome === 'ok')?.value).toBeGreaterThan(0);
    // Each answered request is observed by its route's pattern, method and status
    const http = families.get('ordinal_http_request_duration_seconds')!;
    expect(http.type).toBe('histogram');
    const count = (labels: Record<string, string>) =>
      http.samples.find(
        (s) =>
          s.name.endsWith('_count') && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
      )?.value ?? 0;
    expect(
      count({ method: 'PUT', route: '/api/events/message', status: '201' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      count({ method: 'GET', route: '/api/events/:index', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      count({ method: 'GET', route: '/api/events/:index', status: '400' }),
    ).toBeGreaterThanOrEqual(1);
    expect(count({ method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
  });

  it('refuses what the parser must refuse (the parser itself is strict)', () => {
    expect(() => parseExposition('foo 1\n')).toThrow(/no HELP\/TYPE/);
    expect(() => parseExposition('# HELP a x\n# TYPE a gauge\na{b="c} 1\n')).toThrow(/bad labels/);
    expect(() => parseExposition('# HELP a x\n# TYPE a gauge\na 1\n# TYPE a gauge\n')).toThrow(
      /after samples/,
    );
    expect(() => parseExposition('# HELP a x\n# TYPE a gauge\na one\n')).toThrow(/bad value/);
  });
});
