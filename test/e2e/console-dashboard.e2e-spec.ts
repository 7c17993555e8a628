import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { SubscriptionsService } from '@ordinal/subscriptions';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { RawWriter } from '../support/projections-app.js';
import { DEV_TOKEN } from '../../apps/eventstore/src/config/ordinal-config.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** Where the test leaves the dashboard's screenshot (to look at after a run). */
const SHOT = join(tmpdir(), 'ordinal-console-dashboard.png');

interface Sample {
  at: number;
  head: number;
  safeHead: number;
  rate: number | null;
  hole: { from: number; to: number; heldMs: number } | null;
  consumers: { name: string; lag: number }[];
}
/** A line of a chart as drawn: its values and the samples' times. */
interface Line {
  values: number[];
  times: number[];
  /** The y of its last point (SVG coordinates: smaller is higher). */
  lastY: number;
}

/** Pixels of a PNG by colour class, counted by a blank page of the browser: all distinct colours, and the hole's red. */
async function pixels(browser: Browser, png: Buffer): Promise<{ colours: number; red: number }> {
  const blank = await browser.newPage();
  try {
    return await blank.evaluate(async (data) => {
      const image = new Image();
      image.src = 'data:image/png;base64,' + data;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const context = canvas.getContext('2d')!;
      context.drawImage(image, 0, 0);
      const p = context.getImageData(0, 0, image.width, image.height).data;
      const colours = new Set<number>();
      let red = 0;
      for (let i = 0; i < p.length; i += 4) {
        colours.add((p[i] << 16) | (p[i + 1] << 8) | p[i + 2]);
        if (p[i] - p[i + 1] > 40 && p[i] - p[i + 2] > 40) red++;
      }
      return { colours: colours.size, red };
    }, png.toString('base64'));
  } finally {
    await blank.close();
  }
}

describe('the console dashboard in a real headless Chromium: rate, head, safe head, lag and the held hole, live', () => {
  let db: TestDatabase;
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  const samples = async (): Promise<Sample[]> =>
    (await http(server.baseUrl, 'GET', '/api/dashboard')).body.samples;
  const line = (chart: string, series: string): Promise<Line | null> =>
    page.evaluate(
      ([chart, series]) => {
        const l = document.querySelector(`#${chart} polyline[data-series="${series}"]`);
        if (!l) return null;
        const numbers = (a: string) =>
          (l.getAttribute(a) || '').split(',').filter(Boolean).map(Number);
        const points = (l.getAttribute('points') || '').trim().split(' ');
        return {
          values: numbers('data-values'),
          times: numbers('data-times'),
          lastY: Number(points[points.length - 1]?.split(',')[1]),
        };
      },
      [chart, series],
    );

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_ORDERING: 'concurrent',
      ORDINAL_GAP_TIMEOUT_MS: '60000',
      ORDINAL_DUPLICATE_WINDOW: '0',
    });
    server.app
      .get(SubscriptionsService)
      .subscribe({ name: 'dashboard-audit', stream: '$all', handle: () => undefined });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await db?.drop();
    rmSync(SHOT, { force: true });
  });

  it("draws the ingest rate of messages published at a known rate, the head and every consumer's lag, from the samples the server keeps", async () => {
    // Given the dashboard open
    await page.goto(`${server.baseUrl}/console#token=${DEV_TOKEN}`);
    await page.waitForFunction(() => location.hash === '#tail');
    await page.click('a[data-view="dashboard"]');
    await page.waitForFunction(() => !document.getElementById('view-dashboard')!.hidden);
    // When 10 messages are published every 500 ms for 5 s (20 per second)
    const started = Date.now();
    for (let batch = 0; batch < 10; batch++) {
      const due = started + batch * 500;
      if (Date.now() < due) await new Promise((r) => setTimeout(r, due - Date.now())); // pacing the publisher, not waiting for a result
      const messages = Array.from({ length: 10 }, (_, i) => ({
        messageType: 'Tick',
        userId: 'dash',
        content: { batch, i },
      }));
      expect(
        (await http(server.baseUrl, 'POST', '/api/events/messages', { messages })).status,
      ).toBe(201);
    }
    const ended = Date.now();
    const published = 100 / ((ended - started) / 1000);
    const head = (await http(server.baseUrl, 'GET', '/api/events/head')).body.head;
    // Then the server's samples show the rate, and reach the head with no lag left
    const all = await waitFor(
      async () => {
        const s = await samples();
        const last = s.at(-1);
        return last && last.head === head && last.consumers.every((c) => c.lag === 0) ? s : null;
      },
      20_000,
      'a sample at the head with the consumer caught up',
    );
    const during = all.filter((s) => s.rate !== null && s.at > started + 1000 && s.at <= ended);
    expect(during.length).toBeGreaterThanOrEqual(2);
    const mean = during.reduce((n, s) => n + s.rate!, 0) / during.length;
    expect(mean).toBeGreaterThan(published * 0.5);
    expect(mean).toBeLessThan(published * 1.6);
    // And the page draws exactly those data points: each point of the rate line is a sample's rate
    const rate = await waitFor(
      async () => {
        const l = await line('chart-rate', 'msg/s');
        return l && l.times.includes(all.at(-1)!.at) ? l : null;
      },
      10_000,
      'the rate line up to the last sample',
    );
    const byTime = new Map(all.map((s) => [s.at, s]));
    const drawn = rate.times.map((t, i) => [byTime.get(t)?.rate, rate.values[i]]);
    expect(drawn.filter(([sample]) => sample !== undefined).length).toBeGreaterThanOrEqual(
      during.length,
    );
    for (const [sample, value] of drawn) if (sample !== undefined) expect(value).toBe(sample);
    expect(Math.max(...rate.values)).toBeGreaterThan(published * 0.5);
    // And the head and safe head lines end at the head; the consumer's lag line ends at 0
    const heads = (await line('chart-head', 'head'))!;
    expect(heads.values.at(-1)).toBe(all.at(-1)!.head);
    expect((await line('chart-head', 'safe head'))!.values).toContain(head);
    const lag = (await line('chart-lag', 'dashboard-audit'))!;
    expect(lag.values.length).toBeGreaterThan(0);
    expect(lag.values.every((v) => v >= 0)).toBe(true);
    expect(await page.textContent('#chart-lag [data-legend="dashboard-audit"]')).toMatch(
      /^dashboard-audit: \d+/,
    );
  });

  it('draws a held hole where it is, between the safe head and the head, and shows it in a screenshot', async () => {
    // Given a writer holding a lower position open while another commits above it
    const slow = await RawWriter.open(db.url, 'dashboard-slow-writer');
    const fast = await RawWriter.open(db.url, 'dashboard-fast-writer');
    try {
      await slow.begin();
      const [held] = await slow.insert('order');
      await fast.begin();
      const [above] = await fast.insert('invoice');
      await fast.commit();
      // When the dashboard samples it
      const sample = await waitFor(
        async () => (await samples()).find((s) => s.hole?.from === held && s.head >= above),
        15_000,
        'a sample with the held hole',
      );
      // Then the sample has the hole between the safe head (below it) and the head (above it)
      expect(sample.safeHead).toBe(held - 1);
      expect(sample.hole).toMatchObject({ from: held, to: held });
      // And the page draws a band at that position, between the two lines
      const band = await waitFor(
        () =>
          page.evaluate((held) => {
            const rect = document.querySelector(`#chart-head rect.hole-band[data-from="${held}"]`);
            if (!rect) return null;
            const y = Number(rect.getAttribute('y'));
            return {
              to: Number(rect.getAttribute('data-to')),
              middle: y + Number(rect.getAttribute('height')) / 2,
            };
          }, held),
        15_000,
        'the hole band',
      );
      expect(band.to).toBe(held);
      const head = (await line('chart-head', 'head'))!;
      const safe = (await line('chart-head', 'safe head'))!;
      expect(head.values.at(-1)).toBeGreaterThanOrEqual(above);
      expect(safe.values.at(-1)).toBe(held - 1);
      // (SVG y grows downwards: the head's line is above the band, the safe head's below it)
      expect(band.middle).toBeGreaterThanOrEqual(head.lastY);
      expect(band.middle).toBeLessThanOrEqual(safe.lastY);
      expect(await page.textContent('#dashboard-figures')).toContain(`hole held at ${held} for`);
      // And a screenshot of the chart, saved, shows the band's red; the whole page rendered
      await page.locator('#chart-head').screenshot({ path: SHOT });
      const png = readFileSync(SHOT);
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      const chart = await pixels(browser, png);
      expect(chart.red).toBeGreaterThan(20);
      const full = await pixels(browser, await page.screenshot({ fullPage: true }));
      expect(full.colours).toBeGreaterThan(8);
    } finally {
      await slow.end();
      await fast.end();
    }
  });

  it("the consumers view names each consumer's owner process and the processes standing by", async () => {
    // Given the subscription this server runs (its owner), with no other process registered
    await page.goto(`${server.baseUrl}/console#consumers`);
    const audit = page.locator('#projection-rows tr', { hasText: 'dashboard-audit' });
    await audit.waitFor({ timeout: 10_000 });
    // Then the Owner column says which process runs it, and the Standbys column that none waits
    expect(
      await page.locator('#view-consumers table').first().locator('thead th').allTextContents(),
    ).toEqual([
      'Name',
      'Kind',
      'Stream',
      'Position',
      'Head',
      'Lag',
      'State',
      'Owner',
      'Standbys',
      'Last error',
    ]);
    const cells = await audit.locator('td').allTextContents();
    expect(cells[6]).toBe('running');
    expect(cells[7]).toMatch(
      new RegExp(`^${process.pid}@\\S+ \\(this server\\), heartbeat \\d+ ms ago( \\(overdue\\))?$`),
    );
    expect(cells[8]).toBe('');
  });
});
