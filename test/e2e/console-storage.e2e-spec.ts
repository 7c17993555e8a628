import type { SegmentInfo } from '@ordinal/contract';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { SegmentKeeper } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';
import { humanBytes } from '../../apps/eventstore/src/console/storage-figures.script.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'];
const ADMIN = 'ops-secret';
const READER = 'viewer-secret';
const AS_ADMIN = { authorization: `Bearer ${ADMIN}` };

describe('the console shows the log’s segments (headless Chromium)', () => {
  let db: TestDatabase;
  let server: TestServer;
  let browser: Browser;

  /** The console opened with `secret` as its token, on the storage view through its link. */
  async function openStorage(secret: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${server.baseUrl}/console#token=${secret}`);
    await page.click('header nav a[data-view="storage"]');
    await page.waitForFunction(
      () => !/^(|loading\.\.\.)$/.test(document.getElementById('storage-status')!.textContent),
      undefined,
      { timeout: 10_000 },
    );
    return page;
  }

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_TOKENS: `ops:${ADMIN}:read+write+admin;viewer:${READER}:read`,
      ORDINAL_SEGMENT_SIZE: '1000',
      ORDINAL_DUPLICATE_WINDOW: '0',
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
    // A log of 2,500 messages: past two segments of 1,000, in three batches
    for (const size of [1000, 1000, 500]) {
      const messages = Array.from({ length: size }, (_, n) => ({
        messageType: 'StorageViewed',
        content: { n },
      }));
      const stored = await http(
        server.baseUrl,
        'POST',
        '/api/events/messages',
        { messages },
        AS_ADMIN,
      );
      expect(stored.status).toBe(201);
    }
    // Segments ahead of the head are added in the background after a flush: ensure() adds them
    // now, or waits for the lock of the one adding them. Then every segment is analysed (every
    // estimate known) and vacuumed (autovacuum changes no size while the test reads them).
    await server.app.get(SegmentKeeper).ensure();
    await db.query('VACUUM (ANALYZE) messages');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await db?.drop();
  });

  it('lists every segment with its range, tier, rows, size and table, and the totals by tier', async () => {
    // Given the segments as the API tells them
    const listed = await http(server.baseUrl, 'GET', '/api/admin/segments', undefined, AS_ADMIN);
    const segments = listed.body.segments as SegmentInfo[];
    expect(segments.length).toBeGreaterThanOrEqual(3);
    // When the storage view is opened with an admin token
    const page = await openStorage(ADMIN);
    // Then its link is the active one and it shows the segment size
    expect(await page.getAttribute('header nav a.active', 'data-view')).toBe('storage');
    expect(await page.isVisible('#view-tail')).toBe(false);
    expect(await page.textContent('#storage-size')).toBe(
      '1,000 indices per segment (ORDINAL_SEGMENT_SIZE)',
    );
    // And a row per segment, oldest first, as the API answers it
    const rows = page.locator('#storage-rows tr');
    expect(await rows.count()).toBe(segments.length);
    for (const [i, s] of segments.entries()) {
      const cells = rows.nth(i).locator('td');
      expect(await cells.allTextContents()).toEqual([
        String(s.firstIndex),
        String(s.lastIndex),
        s.tier,
        s.estimatedRows === null ? 'not analysed yet' : s.estimatedRows.toLocaleString('en'),
        humanBytes(s.bytes),
        s.table,
        s.createdAt,
      ]);
      // the exact size on hover
      expect(await cells.nth(4).getAttribute('title')).toBe(
        `${s.bytes.toLocaleString('en')} bytes`,
      );
    }
    expect(await rows.first().locator('td').allTextContents()).toEqual(
      expect.arrayContaining(['1', '1000', 'hot', '1,000', 'messages_0000000000000001']),
    );
    // And the totals: every segment hot, the 2,500 rows and the server's StartMarker, their sizes added up
    const bytes = segments.reduce((sum, s) => sum + s.bytes, 0);
    const totals = page.locator('#storage-totals tr');
    expect(await totals.count()).toBe(1);
    expect(await totals.first().locator('td').allTextContents()).toEqual([
      'hot',
      String(segments.length),
      '2,501',
      humanBytes(bytes),
    ]);
    expect(await totals.first().locator('td').nth(3).getAttribute('title')).toBe(
      `${bytes.toLocaleString('en')} bytes`,
    );
    await page.close();
  });

  it('tells a token without the admin scope that the view needs it', async () => {
    // When the storage view is opened with a read-only token
    const page = await openStorage(READER);
    // Then it says the admin scope is needed, and shows no table
    const status = page.locator('#storage-status');
    expect(await status.textContent()).toMatch(/needs a token with the admin scope.*403/);
    expect(await status.getAttribute('class')).toBe('status error');
    expect(await page.isVisible('#storage-detail')).toBe(false);
    expect(await page.locator('#storage-rows tr').count()).toBe(0);
    // And the rest of the console still works with it: the summary line is read
    await page.waitForFunction(
      () => /^up to date/.test(document.getElementById('summary-status')!.textContent),
      undefined,
      { timeout: 10_000 },
    );
    await page.close();
  });
});
