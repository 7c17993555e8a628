import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { SubscriptionsService } from '@ordinal/subscriptions';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { RawWriter } from '../support/projections-app.js';
import { DEV_TOKEN } from '../../apps/eventstore/src/config/ordinal-config.js';

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

/** Distinct colours in a PNG, counted by a blank page of the browser (a blank screenshot has one or two). */
async function distinctColours(browser: Browser, png: Buffer): Promise<number> {
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
      const pixels = context.getImageData(0, 0, image.width, image.height).data;
      const colours = new Set<number>();
      for (let i = 0; i < pixels.length; i += 16)
        colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
      return colours.size;
    }, png.toString('base64'));
  } finally {
    await blank.close();
  }
}

describe('the console at /console in a real headless Chromium', () => {
  let db: TestDatabase;
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  /** A full-page screenshot that is a PNG with more than a handful of colours: the page rendered. */
  async function expectRendered(shot: Page): Promise<void> {
    const png = await shot.screenshot({ fullPage: true });
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(await distinctColours(browser, png)).toBeGreaterThan(8);
  }

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
      .subscribe({ name: 'console-audit', stream: '$all', handle: () => undefined });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await db?.drop();
  });

  it('opens from / on the live tail with the last messages, shows one published after it opened, and filters by type', async () => {
    // Given messages in the log before the page opens
    const before = await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'OrderPlaced',
      userId: 'alice',
      content: { orderId: 'o-1' },
    });
    // When the console is opened at / with the token in the fragment, as the server prints it
    const response = await page.goto(`${server.baseUrl}/#token=${DEV_TOKEN}`);
    expect(response?.status()).toBe(200);
    // Then the token leaves the address bar for the tab's sessionStorage
    await page.waitForFunction(() => location.hash === '#tail', undefined, { timeout: 10_000 });
    expect(page.url()).toBe(`${server.baseUrl}/console#tail`);
    expect(await page.evaluate(() => sessionStorage.getItem('ordinal-token'))).toBe(DEV_TOKEN);
    await page.waitForFunction(
      () => document.getElementById('tail-status')?.textContent?.startsWith('connected'),
      undefined,
      { timeout: 10_000 },
    );
    // Then it shows the history and a message published now, live
    await page
      .locator(`#tail-rows tr[data-index="${before.body.id}"]`)
      .waitFor({ timeout: 10_000 });
    const live = await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'OrderShipped',
      userId: 'alice',
      content: { orderId: 'o-1', note: '<i>fast</i>' },
    });
    const row = page.locator(`#tail-rows tr[data-index="${live.body.id}"]`);
    await row.waitFor({ timeout: 10_000 });
    expect(await row.locator('td').nth(1).textContent()).toBe('OrderShipped');
    expect(await row.locator('td').nth(5).textContent()).toContain('"note":"<i>fast</i>"');
    expect(await page.locator('#tail-rows i').count()).toBe(0);
    await expectRendered(page);
    // And with a type filter only that type arrives
    await page.fill('#tail-types', 'OrderPlaced');
    await page.dispatchEvent('#tail-types', 'change');
    await page.waitForFunction(
      () => document.getElementById('tail-status')?.textContent?.startsWith('connected'),
      undefined,
      { timeout: 10_000 },
    );
    const other = await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'OrderShipped',
      content: { orderId: 'o-2' },
    });
    const wanted = await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'OrderPlaced',
      content: { orderId: 'o-3' },
    });
    await page
      .locator(`#tail-rows tr[data-index="${wanted.body.id}"]`)
      .waitFor({ timeout: 10_000 });
    expect(await page.locator(`#tail-rows tr[data-index="${other.body.id}"]`).count()).toBe(0);
    expect(
      await page
        .locator('#tail-rows tr')
        .evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.type)),
    ).toEqual(expect.arrayContaining(['OrderPlaced']));
    expect(
      new Set(
        await page
          .locator('#tail-rows tr')
          .evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.type)),
      ),
    ).toEqual(new Set(['OrderPlaced']));
  });

  it('shows a message in detail (body, metadata, stream, hash) from a click in the tail', async () => {
    const put = await http(server.baseUrl, 'POST', '/api/streams/order-77/events', {
      expectedVersion: 0,
      events: [
        { eventType: 'Placed', data: { total: 12.5 }, metadata: { source: 'console-test' } },
      ],
    });
    expect(put.status).toBe(201);
    const index = put.body.firstIndex as number;
    const stored = (await http(server.baseUrl, 'GET', `/api/events/${index}`)).body;
    await page.fill('#tail-types', '');
    await page.dispatchEvent('#tail-types', 'change');
    await page.locator(`#tail-rows tr[data-index="${index}"] a`).first().click();
    await page.locator('#message-detail:not([hidden])').waitFor({ timeout: 10_000 });
    const facts = await page.locator('#message-facts dd').allTextContents();
    // Index, type, user, stream, created, hash, schema version, key, correlation, cause, trace parent
    expect(facts).toEqual([
      String(index),
      'Placed',
      '-',
      'order-77 @ version 1',
      stored.createdAt,
      stored.contentHash,
      '1',
      '-',
      stored.correlationId,
      stored.correlationId,
      '-',
    ]);
    expect(JSON.parse((await page.textContent('#message-body'))!)).toEqual({ total: 12.5 });
    expect(JSON.parse((await page.textContent('#message-metadata'))!)).toEqual({
      source: 'console-test',
    });
    await expectRendered(page);
  });

  it('browses a stream: its events, version and snapshot', async () => {
    await http(server.baseUrl, 'POST', '/api/streams/order-77/events', {
      expectedVersion: 1,
      events: [{ eventType: 'Paid', data: { amount: 12.5 } }],
    });
    await http(server.baseUrl, 'PUT', '/api/streams/order-77/snapshot', {
      version: 2,
      state: { status: 'paid' },
    });
    // When the stream link of the message is followed
    await page.click('#message-facts a');
    await page.locator('#stream-detail:not([hidden])').waitFor({ timeout: 10_000 });
    // Then the stream's version, snapshot and events are there
    expect(await page.textContent('#stream-version')).toBe('2');
    expect(await page.textContent('#stream-category')).toBe('order');
    expect(await page.textContent('#stream-snapshot')).toContain('at version 2');
    expect(JSON.parse((await page.textContent('#stream-snapshot pre'))!)).toEqual({
      status: 'paid',
    });
    const rows = await page
      .locator('#stream-events tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 3).map((td) => td.textContent)),
      );
    expect(rows.map((r) => [r[0], r[2]])).toEqual([
      ['1', 'Placed'],
      ['2', 'Paid'],
    ]);
    await expectRendered(page);
  });

  it('lists the streams in the stream browser (id, version, last append), filters them by prefix, and opens one from the list', async () => {
    // Given three shelves besides the streams of the tests above
    for (const id of ['shelf-c', 'shelf-a', 'shelf-b'])
      expect(
        (
          await http(server.baseUrl, 'POST', `/api/streams/${id}/events`, {
            expectedVersion: 0,
            events: [{ eventType: 'ShelfBuilt', data: { id } }],
          })
        ).status,
      ).toBe(201);
    const listed = () =>
      page
        .locator('#stream-list tr')
        .evaluateAll((trs) =>
          trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent)),
        );
    // When the stream browser opens without a stream
    await page.evaluate(() => (location.hash = '#stream'));
    await page.locator('#stream-list a').first().waitFor({ timeout: 10_000 });
    // Then it lists every stream in id order, with its version
    expect(await listed()).toEqual([
      ['order-77', '2'],
      ['shelf-a', '1'],
      ['shelf-b', '1'],
      ['shelf-c', '1'],
    ]);
    expect(await page.locator('#stream-more').isHidden()).toBe(true);
    // When it is filtered by a prefix
    await page.fill('#stream-prefix', 'shelf-');
    await page.click('#stream-list-form button');
    await page.waitForFunction(
      () => document.querySelectorAll('#stream-list a').length === 3,
      undefined,
      { timeout: 10_000 },
    );
    expect((await listed()).map(([id]) => id)).toEqual(['shelf-a', 'shelf-b', 'shelf-c']);
    await expectRendered(page);
    // And one is opened from the list: its detail replaces the list
    await page.click('#stream-list a:text-is("shelf-b")');
    await page.locator('#stream-detail:not([hidden])').waitFor({ timeout: 10_000 });
    expect(await page.textContent('#stream-name')).toBe('shelf-b');
    expect(await page.textContent('#stream-version')).toBe('1');
    expect(await page.locator('#stream-list-box').isHidden()).toBe(true);
  });

  it("shows a stream's state and metadata: live with hidden versions, deleted, tombstoned", async () => {
    // Given a stream with a retention rule, one soft-deleted and one tombstoned
    await http(server.baseUrl, 'POST', '/api/streams/memo-1/events', {
      expectedVersion: 0,
      events: [1, 2, 3].map((n) => ({ eventType: 'Noted', data: { n } })),
    });
    await http(server.baseUrl, 'PUT', '/api/streams/memo-1/metadata', { truncateBefore: 3 });
    for (const id of ['memo-2', 'memo-3'])
      await http(server.baseUrl, 'POST', `/api/streams/${id}/events`, {
        expectedVersion: 0,
        events: [{ eventType: 'Noted', data: {} }],
      });
    await http(server.baseUrl, 'DELETE', '/api/streams/memo-2');
    await http(server.baseUrl, 'DELETE', '/api/streams/memo-3?mode=tombstone');
    const stateOf = async (id: string) => {
      await page.evaluate((hash) => (location.hash = hash), `#stream/${id}`);
      await page.waitForFunction(
        (want) =>
          document.getElementById('stream-name')?.textContent === want &&
          !document.getElementById('stream-detail')?.hidden,
        id,
        { timeout: 10_000 },
      );
      return [await page.textContent('#stream-state'), await page.textContent('#stream-metadata')];
    };
    // Then each page says what the stream is
    const [live, metadata] = await stateOf('memo-1');
    expect(live).toBe('live, versions below 3 hidden (truncated)');
    expect(metadata).toContain('"truncateBefore":3');
    expect((await stateOf('memo-2'))[0]).toContain('deleted at version 1');
    expect((await stateOf('memo-3'))[0]).toBe('tombstoned (for ever)');
    // And after a scavenge the consumers view shows the run and what it freed
    const run = await http(server.baseUrl, 'POST', '/api/admin/scavenge?wait=true');
    await page.evaluate(() => (location.hash = '#consumers'));
    await page.waitForFunction(
      (id) =>
        (document.getElementById('scavenge')?.textContent ?? '').startsWith(`run ${id} finished`),
      run.body.id,
      { timeout: 10_000 },
    );
    expect(await page.textContent('#scavenge')).toContain(`${run.body.rowsErased} rows erased`);
  });

  it('shows the chain of a correlation: every message in index order, each under its cause, the cause a link', async () => {
    // Given an order and two messages caused by it (as a handler of it would store them), and one of another correlation
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const order = (
      await http(
        server.baseUrl,
        'PUT',
        '/api/events/message',
        { messageType: 'OrderPlaced', content: { orderId: 'chain-1' } },
        { ...DEV_AUTH, 'x-correlation-id': 'console-chain', traceparent },
      )
    ).body;
    await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'Unrelated',
      content: { n: 1 },
    });
    const payment = (
      await http(server.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'PaymentRequested',
        content: { orderId: 'chain-1' },
        correlationId: 'console-chain',
        causationId: String(order.id),
      })
    ).body;
    const charged = (
      await http(server.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'PaymentCharged',
        content: { orderId: 'chain-1' },
        correlationId: 'console-chain',
        causationId: String(payment.id),
      })
    ).body;
    // When the payment's page is opened
    await page.goto(`${server.baseUrl}/console#message/${payment.id}`);
    await page.locator('#message-chain tr').nth(2).waitFor({ timeout: 10_000 });
    // Then its facts name the correlation and link the cause
    const facts = await page.locator('#message-facts dd').allTextContents();
    expect(facts.slice(-3)).toEqual(['console-chain', `message ${order.id}`, '-']);
    expect(
      await page
        .locator('#message-facts dd a', { hasText: `message ${order.id}` })
        .getAttribute('href'),
    ).toBe(`#message/${order.id}`);
    // And the chain lists exactly the correlation's messages in index order, each indented under its cause
    const rows = await page.locator('#message-chain tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        index: (tr as HTMLElement).dataset.index,
        current: tr.classList.contains('current'),
        cells: [...tr.querySelectorAll('td')].map((td) => td.textContent),
      })),
    );
    expect(rows.map((r) => Number(r.index))).toEqual([order.id, payment.id, charged.id]);
    expect(rows.map((r) => r.current)).toEqual([false, true, false]);
    expect(rows.map((r) => r.cells[1])).toEqual([
      'OrderPlaced',
      'PaymentRequested',
      'PaymentCharged',
    ]);
    expect(rows.map((r) => r.cells[2])).toEqual([
      'console-chain',
      String(order.id),
      String(payment.id),
    ]);
    expect(rows[2].cells[0].indexOf(String(charged.id))).toBeGreaterThan(
      rows[1].cells[0].indexOf(String(payment.id)),
    );
    expect(await page.textContent('#chain-note')).toContain('3 messages');
    // And the order's own page shows its trace parent
    await page.goto(`${server.baseUrl}/console#message/${order.id}`);
    await page.locator('#message-chain tr').nth(2).waitFor({ timeout: 10_000 });
    expect((await page.locator('#message-facts dd').allTextContents()).slice(-3)).toEqual([
      'console-chain',
      'console-chain',
      traceparent,
    ]);
    await expectRendered(page);
  });

  it('shows projections with lag and state, and the held hole with its holder', async () => {
    // Given a writer holding a lower position open while another commits above it
    const slow = await RawWriter.open(db.url, 'console-slow-writer');
    const fast = await RawWriter.open(db.url, 'console-fast-writer');
    try {
      await slow.begin();
      const [held] = await slow.insert('order');
      await fast.begin();
      await fast.insert('invoice');
      await fast.commit();
      await waitFor(
        async () => (await http(server.baseUrl, 'GET', '/api/projections')).body.watermark.heldHole,
        10_000,
        'the held hole',
      );
      // When the projections view is opened
      await page.goto(`${server.baseUrl}/console#consumers`);
      // Then the hole and its holder are shown, and the subscription with its position and state
      await page.waitForFunction(
        () => document.getElementById('hole')?.textContent?.startsWith('Hole held'),
        undefined,
        { timeout: 10_000 },
      );
      const hole = await page.textContent('#hole');
      expect(hole).toContain(`Hole held at ${held} for`);
      expect(hole).toContain('(console-slow-writer)');
      const audit = page.locator('#projection-rows tr', { hasText: 'console-audit' });
      await audit.waitFor({ timeout: 10_000 });
      const cells = await audit.locator('td').allTextContents();
      expect(cells.slice(0, 3)).toEqual(['console-audit', 'subscription', '$all']);
      expect(Number(cells[5])).toBe(Number(cells[4]) - Number(cells[3]));
      expect(cells[6]).toBe('running');
      expect(await page.textContent('#amqp-state')).toBe('(AMQP is off)');
      await expectRendered(page);
      // And once the writer commits the hole is gone from the view
      await slow.commit();
      await page.waitForFunction(
        () => document.getElementById('hole')?.textContent?.startsWith('No hole held'),
        undefined,
        { timeout: 10_000 },
      );
    } finally {
      await slow.end();
      await fast.end();
    }
  });

  it('never serves a token in a page: a new tab has none until it is given one', async () => {
    // Given the console and the debug page fetched by anyone (another host on the network, say)
    for (const path of ['/console', '/console/console.js', '/debug/events']) {
      const body = await (await fetch(`${server.baseUrl}${path}`)).text();
      // Then neither carries the development token
      expect(body).not.toContain(DEV_TOKEN);
    }
    // And a fresh tab opened without a token asks for one and reads nothing
    const fresh = await browser.newPage();
    await fresh.goto(`${server.baseUrl}/console#tail`);
    expect(await fresh.inputValue('#token')).toBe('');
    expect(await fresh.textContent('#tail-status')).toBe('disconnected');
    await fresh.close();
  });

  it('is the page the API description links (its description and its external docs)', async () => {
    const docs = (await http(server.baseUrl, 'GET', '/api/docs-json', undefined, {})).body as {
      info: { description: string };
      externalDocs: { url: string };
    };
    expect(docs.externalDocs.url).toBe('/console');
    expect(docs.info.description).toContain('[/console](/console)');
    expect(docs.info.description).not.toContain('/debug/events');
    expect((await fetch(`${server.baseUrl}${docs.externalDocs.url}`)).status).toBe(200);
  });

  it('says why when the token is wrong; the old debug page still works', async () => {
    const fresh = await browser.newPage();
    await fresh.goto(`${server.baseUrl}/console#consumers`);
    await fresh.fill('#token', 'not-a-token');
    await fresh.click('#save-token');
    await fresh.waitForFunction(
      () => /^401/.test(document.getElementById('consumers-status')?.textContent ?? ''),
      undefined,
      { timeout: 10_000 },
    );
    await fresh.close();
    expect((await fetch(`${server.baseUrl}/debug/events`)).status).toBe(200);
  });
});
