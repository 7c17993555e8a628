import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';
import { DEV_TOKEN } from '../../apps/eventstore/src/config/ordinal-config.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'];

/** An operator's token with the `tenants` scope (the development token has not got it). */
const OPERATOR = 'console-operator-secret';
const AS_OPERATOR = { authorization: `Bearer ${OPERATOR}` };
const AS_ACME = { ...AS_OPERATOR, 'ordinal-tenant': 'acme' };

/**
 * A tenant's message links to the tenant's stream (docs/tenants.md: tenant `acme`'s `order-1`
 * and the `order-1` of no tenant are two streams), and the stream page reads it as that tenant.
 */
describe("the console opens a tenant's stream from its messages (headless Chromium)", () => {
  let db: TestDatabase;
  let server: TestServer;
  let browser: Browser;
  let acmeFirst: number;
  let acmeLast: number;
  let plainIndex: number;

  /** A page of its own (its own sessionStorage) holding `token`, at `hash`. */
  async function open(token: string, hash: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${server.baseUrl}/console#token=${token}`);
    await page.waitForFunction(() => location.hash === '#tail', undefined, { timeout: 10_000 });
    await page.evaluate((h) => (location.hash = h), hash);
    return page;
  }

  /** The stream page's events as [version, type, data]. */
  const events = (page: Page) =>
    page
      .locator('#stream-events tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
      )
      .then((rows) => rows.map((r) => [r[0], r[2], JSON.parse(r[5] ?? 'null') as unknown]));

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_DUPLICATE_WINDOW: '0',
      ORDINAL_TOKENS: `operator:${OPERATOR}:read+write+admin+tenants`,
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
    // Given the order-1 of no tenant, one event
    const plain = await http(
      server.baseUrl,
      'POST',
      '/api/streams/order-1/events',
      { expectedVersion: 0, events: [{ eventType: 'PlainPlaced', data: { owner: 'nobody' } }] },
      AS_OPERATOR,
    );
    expect(plain.status).toBe(201);
    plainIndex = plain.body.firstIndex as number;
    // And acme's order-1: two events, a snapshot and metadata of its own
    const acme = await http(
      server.baseUrl,
      'POST',
      '/api/streams/order-1/events',
      {
        expectedVersion: 0,
        events: [
          { eventType: 'AcmePlaced', data: { owner: 'acme' } },
          { eventType: 'AcmePaid', data: { owner: 'acme', paid: true } },
        ],
      },
      AS_ACME,
    );
    expect(acme.status).toBe(201);
    acmeFirst = acme.body.firstIndex as number;
    acmeLast = acme.body.lastIndex as number;
    const stored = await http(
      server.baseUrl,
      'GET',
      `/api/events/${acmeLast}`,
      undefined,
      AS_OPERATOR,
    );
    expect([stored.body.streamId, stored.body.tenant]).toEqual(['order-1', 'acme']);
    const snapshot = await http(
      server.baseUrl,
      'PUT',
      '/api/streams/order-1/snapshot',
      { version: 2, state: { owner: 'acme' } },
      AS_ACME,
    );
    expect(snapshot.status).toBeLessThan(300);
    const metadata = await http(
      server.baseUrl,
      'PUT',
      '/api/streams/order-1/metadata',
      { maxCount: 50 },
      AS_ACME,
    );
    expect(metadata.status).toBeLessThan(300);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await db?.drop();
  });

  it("follows a tenant's message's Stream link to the tenant's stream, not the order-1 of no tenant", async () => {
    const page = await open(OPERATOR, `#message/${acmeLast}`);
    try {
      await page.locator('#message-detail:not([hidden])').waitFor({ timeout: 10_000 });
      expect(await page.locator('#message-facts dt:text-is("Tenant") + dd').textContent()).toBe(
        'acme',
      );
      // When its Stream link is followed
      await page.click('#message-facts a[href^="#stream/"]');
      await page.locator('#stream-detail:not([hidden])').waitFor({ timeout: 10_000 });
      // Then the page shows acme's order-1: its events, version, snapshot and metadata
      expect(await events(page)).toEqual([
        ['1', 'AcmePlaced', { owner: 'acme' }],
        ['2', 'AcmePaid', { owner: 'acme', paid: true }],
      ]);
      expect(await page.textContent('#stream-name')).toBe('order-1');
      expect(await page.textContent('#stream-version')).toBe('2');
      expect(JSON.parse((await page.textContent('#stream-snapshot pre'))!)).toEqual({
        owner: 'acme',
      });
      expect(await page.textContent('#stream-metadata')).toContain('"maxCount":50');
      // And it says whose stream it is
      expect(await page.textContent('#stream-tenant')).toBe('acme');
      expect(await page.locator('#stream-tenant').isVisible()).toBe(true);
      expect(await page.inputValue('#stream-tenant-input')).toBe('acme');
    } finally {
      await page.close();
    }
  });

  it("links a tenant's messages in the live tail, the chain and the stream list to the tenant's stream, and the others as before", async () => {
    const page = await open(OPERATOR, '#tail');
    try {
      const tailRow = (index: number) => page.locator(`#tail-rows tr[data-index="${index}"]`);
      await tailRow(acmeLast).waitFor({ timeout: 10_000 });
      await tailRow(plainIndex).waitFor({ timeout: 10_000 });
      // The untenanted link is unchanged
      expect(await tailRow(plainIndex).locator('a[href^="#stream/"]').getAttribute('href')).toBe(
        '#stream/order-1',
      );
      const acmeHref = await tailRow(acmeFirst).locator('a[href^="#stream/"]').getAttribute('href');
      expect(acmeHref).toBe('#stream/order-1?tenant=acme');
      // The chain of acme's message links its stream to the tenant's too
      await page.evaluate((h) => (location.hash = h), `#message/${acmeFirst}`);
      await page
        .locator(`#message-chain tr[data-index="${acmeFirst}"] a[href^="#stream/"]`)
        .waitFor({ timeout: 10_000 });
      expect(
        await page
          .locator(`#message-chain tr[data-index="${acmeFirst}"] a[href^="#stream/"]`)
          .getAttribute('href'),
      ).toBe(acmeHref);
      // Following the tail's link opens acme's order-1
      await page.evaluate(() => (location.hash = '#tail'));
      await tailRow(acmeFirst).locator('a[href^="#stream/"]').click();
      await page.locator('#stream-detail:not([hidden])').waitFor({ timeout: 10_000 });
      expect((await events(page)).map((e) => e[1])).toEqual(['AcmePlaced', 'AcmePaid']);
      // The stream list names both order-1s, and opens each one as its own
      await page.evaluate(() => (location.hash = '#stream'));
      await page.locator('#stream-list a').nth(1).waitFor({ timeout: 10_000 });
      const listed = await page
        .locator('#stream-list a')
        .evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
      expect(listed.filter((href) => href.includes('order-1')).sort()).toEqual(
        [acmeHref, '#stream/order-1'].sort(),
      );
      await page.click('#stream-list a[href="#stream/order-1"]');
      await page.waitForFunction(
        () =>
          document.querySelector('#stream-events td:nth-child(3)')?.textContent === 'PlainPlaced',
        undefined,
        { timeout: 10_000 },
      );
      expect(await events(page)).toEqual([['1', 'PlainPlaced', { owner: 'nobody' }]]);
      expect(await page.locator('#stream-tenant').isVisible()).toBe(false);
      expect(await page.inputValue('#stream-tenant-input')).toBe('');
      // And the stream form opens a tenant's stream by its tenant field
      await page.fill('#stream-id', 'order-1');
      await page.fill('#stream-tenant-input', 'acme');
      await page.click('#stream-form button[type="submit"]');
      await page.waitForFunction(
        () =>
          document.querySelector('#stream-events td:nth-child(3)')?.textContent === 'AcmePlaced',
        undefined,
        { timeout: 10_000 },
      );
      expect(await page.textContent('#stream-tenant')).toBe('acme');
      expect(await page.evaluate(() => location.hash)).toBe(acmeHref);
    } finally {
      await page.close();
    }
  });

  it("shows the server's 403 to a token without the tenants scope, not another stream", async () => {
    const page = await open(DEV_TOKEN, `#message/${acmeLast}`);
    try {
      await page.locator('#message-detail:not([hidden])').waitFor({ timeout: 10_000 });
      await page.click('#message-facts a[href^="#stream/"]');
      await page.waitForFunction(
        () => document.getElementById('stream-status')?.classList.contains('error'),
        undefined,
        { timeout: 10_000 },
      );
      expect(await page.textContent('#stream-status')).toMatch(
        /^403: .*lacks the 'tenants' scope: it may not act for tenant 'acme'/,
      );
      expect(await page.locator('#stream-detail').isHidden()).toBe(true);
    } finally {
      await page.close();
    }
  });
});
