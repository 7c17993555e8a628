import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describe('the debug console in a real headless Chromium (R7)', () => {
  let db: TestDatabase;
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_TOKENS: 'viewer:viewer-secret:read',
      ORDINAL_DUPLICATE_WINDOW: '0',
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await db?.drop();
  });

  it('shows a message published after the page opened, live, filtered by type', async () => {
    // Given the page, opened without a token, with a read-only token and a type filter typed in
    const page = await browser.newPage();
    const response = await page.goto(`${server.baseUrl}/debug/events`);
    expect(response?.status()).toBe(200);
    await page.fill('#token', 'viewer-secret');
    await page.fill('#types', 'OrderPlaced');
    await page.click('#connect');
    await page.waitForFunction(
      () => document.getElementById('status')?.textContent?.startsWith('connected'),
      undefined,
      { timeout: 10_000 },
    );
    // When messages of two types are published after the page connected
    const skipped = await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'OrderCancelled',
      userId: 'wile',
      content: { orderId: 'o-0' },
    });
    const shown = await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'OrderPlaced',
      userId: 'wile',
      content: { orderId: 'o-1', item: '<b>rocket</b>' },
    });
    expect(shown.status).toBe(201);
    // Then the matching one appears as a row, its body shown as text, and the other does not
    const row = page.locator(`#messages tr[data-index="${shown.body.id}"]`);
    await row.waitFor({ timeout: 10_000 });
    expect(await row.locator('td').nth(1).textContent()).toBe('OrderPlaced');
    expect(await row.locator('td').nth(2).textContent()).toBe('wile');
    expect(await row.locator('td.body').textContent()).toContain('"item":"<b>rocket</b>"');
    expect(await page.locator('#messages b').count()).toBe(0);
    expect(await page.locator(`#messages tr[data-index="${skipped.body.id}"]`).count()).toBe(0);
    expect(await page.locator('#messages tr').count()).toBe(1);
    await page.close();
  });

  it('says why when the token is wrong', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.baseUrl}/debug/events`);
    await page.fill('#token', 'not-a-token');
    await page.click('#connect');
    await page.waitForFunction(
      () => document.getElementById('status')?.className === 'error',
      undefined,
      { timeout: 10_000 },
    );
    expect(await page.textContent('#status')).toMatch(/401/);
    await page.close();
  });
});
