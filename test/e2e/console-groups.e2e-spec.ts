import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';
import { DEV_TOKEN } from '../../apps/eventstore/src/config/ordinal-config.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'];

describe('the console shows consumer groups (headless Chromium)', () => {
  let db: TestDatabase;
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
    db = await createTestDatabase();
    server = await startServer(db.url, { ORDINAL_DUPLICATE_WINDOW: '0' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await db?.drop();
  });

  it('lists each group with its members, checkpoint, lag, in flight, ready and parked', async () => {
    // Given a group with one member holding one event and one parked
    await http(server.baseUrl, 'PUT', '/api/consumer-groups/console-group', {
      source: { types: ['ConsoleGroupEvent'] },
      strategy: 'pinned_by_stream',
    });
    for (let n = 0; n < 3; n++)
      await http(server.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'ConsoleGroupEvent',
        content: { n },
      });
    const got = await http(server.baseUrl, 'POST', '/api/consumer-groups/console-group/fetch', {
      memberId: 'console-m',
      max: 2,
      waitMs: 2000,
    });
    const [held, bad] = got.body.events.map((e: { index: number }) => e.index);
    await http(server.baseUrl, 'POST', '/api/consumer-groups/console-group/nack', {
      memberId: 'console-m',
      epoch: got.body.epoch,
      indices: [bad],
      action: 'park',
    });
    const status = (await http(server.baseUrl, 'GET', '/api/consumer-groups/console-group')).body;
    // When the consumers view is opened with the token
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${server.baseUrl}/#token=${DEV_TOKEN}`);
    await page.goto(`${server.baseUrl}/console#consumers`);
    // Then the group's row shows its figures
    const row = page.locator('#group-rows tr', { hasText: 'console-group' });
    await row.waitFor({ timeout: 10_000 });
    const cells = await row.locator('td').allTextContents();
    expect(cells).toEqual([
      'console-group',
      'pinned_by_stream',
      'active',
      '1 live: console-m (1)',
      String(held - 1),
      String(status.lag),
      '1',
      '1',
      '1',
    ]);
    await page.close();
  });
});
