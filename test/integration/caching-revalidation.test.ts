/**
 * Revalidation and stale-while-revalidate end to end (docs/caching.md): a real gateway in front
 * of a real backend that counts its calls, checks the validators the cache sends and answers 304.
 * Conditional revalidation (ETag, Last-Modified), the 304 that refreshes the stored head, a
 * changed answer, collapsed revalidations, the client's own validators, stale-while-revalidate
 * (the answer's directive and the route's key), one background refresh per key, a failing
 * refresh, identity kept by a refresh; HTTP/1.1 and HTTP/2; Chromium revalidating.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect } from 'node:http2';
import { gunzipSync } from 'node:zlib';
import type { IncomingMessage } from 'node:http';
import { chromium } from 'playwright-core';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { fetchFlat } from '../support/http.js';
import { hs256Signer } from '../support/tokens.js';
import { docExample } from '../support/doc-example.js';

const SECRET = 'caching-reval-secret-0123456789abcdef0123456789';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LM = 'Mon, 02 Nov 2026 10:00:00 GMT';
const signClaims = hs256Signer(SECRET, { expiresIn: '5m' });
const sign = (sub: string) => signClaims({ sub });

/** A cache test's answer, with the backend's call number `n` its JSON body carries. */
async function get(url: string, headers: Record<string, string> = {}, method = 'GET') {
  const reply = await fetchFlat(url, headers, method);
  return { ...reply, n: () => JSON.parse(reply.text).n as number };
}

/** A GET over HTTP/2: status, head and body. */
async function getH2(url: string, path: string) {
  const session = connect(url);
  try {
    return await new Promise<{ head: Record<string, unknown>; text: string }>((resolve, reject) => {
      const stream = session.request({ ':path': path });
      let head: Record<string, unknown> = {};
      const chunks: Buffer[] = [];
      stream.on('response', (h) => (head = h));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolve({ head, text: Buffer.concat(chunks).toString() }));
      stream.on('error', reject);
    });
  } finally {
    session.close();
  }
}

describe('revalidation and stale-while-revalidate', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  const calls = new Map<string, number>();
  const count = (path: string) => calls.get(path) ?? 0;
  /** The conditional requests each path received, in order. */
  const conditional = new Map<string, IncomingMessage['headers'][]>();
  const conditionals = (path: string) => conditional.get(path) ?? [];
  /** Held answers: a path's next conditional request waits for its release. */
  const held = new Map<string, { arrived: () => void; release: Promise<void> }>();
  let swrFailing = false;
  let sieFailing = false;

  /** Holds the next conditional request of `path` until `release()`; `arrived` resolves when it came. */
  function hold(path: string) {
    let release!: () => void;
    let arrived!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const came = new Promise<void>((resolve) => (arrived = resolve));
    held.set(path, { arrived, release: released });
    return { release, arrived: came };
  }

  before(async () => {
    backend = await startBackend(async (req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      calls.set(path, count(path) + 1);
      const n = count(path);
      const inm = req.headers['if-none-match'];
      const ims = req.headers['if-modified-since'];
      if (inm !== undefined || ims !== undefined) {
        conditional.set(path, [...conditionals(path), req.headers]);
        const h = held.get(path);
        if (h !== undefined) {
          held.delete(path);
          h.arrived();
          await h.release;
        }
      }
      const send = (
        headers: Record<string, string>,
        body = JSON.stringify({ path, n, user: req.headers['x-sub'] }),
      ) => {
        res.writeHead(200, { 'content-type': 'application/json', ...headers });
        res.end(body);
      };
      const notModified = (headers: Record<string, string>) => {
        res.writeHead(304, headers);
        res.end();
      };
      switch (path) {
        case '/etag':
        case '/slow-reval':
        case '/head':
        case '/head-first':
        case '/chromium':
          if (inm === '"v1"')
            return notModified({ 'cache-control': 'max-age=60', etag: '"v1"', 'x-checked': String(n) });
          return send({ 'cache-control': 'max-age=0', etag: '"v1"', 'x-checked': 'never' });
        case '/lm':
          if (ims === LM) return notModified({ 'cache-control': 'max-age=60' });
          return send({ 'cache-control': 'max-age=0', 'last-modified': LM });
        case '/changing':
          return send({ 'cache-control': 'max-age=0', etag: `"v${n}"` });
        case '/swr':
          return send({ 'cache-control': `max-age=${n === 1 ? 0 : 60}, stale-while-revalidate=60`, etag: `"s${n}"` });
        case '/swr-304':
        case '/swr-h2':
        case '/swr-route':
          if (inm === '"v1"') return notModified({ 'cache-control': 'max-age=60', etag: '"v1"' });
          return send({
            'cache-control': path !== '/swr-route' ? 'max-age=0, stale-while-revalidate=60' : 'max-age=0',
            etag: '"v1"',
          });
        case '/gz':
        case '/swr-gz':
          if (inm === 'W/"g1"' || inm === '"g1"') return notModified({ 'cache-control': 'max-age=60', etag: '"g1"' });
          return send(
            { 'cache-control': `max-age=0${path === '/swr-gz' ? ', stale-while-revalidate=60' : ''}`, etag: '"g1"' },
            JSON.stringify({ path, n, pad: 'z'.repeat(3000) }),
          );
        case '/swr-fail':
          if (swrFailing) {
            res.writeHead(503, { 'content-type': 'application/json' });
            return res.end('{"down":true}');
          }
          return send({ 'cache-control': 'max-age=0, stale-while-revalidate=60', etag: '"f1"' });
        case '/sie':
          if (sieFailing) {
            res.writeHead(503, { 'content-type': 'application/json' });
            return res.end('{"down":true}');
          }
          return send({ 'cache-control': 'max-age=0', etag: '"i1"' });
        case '/swr-old':
          return send({ 'cache-control': 'max-age=10, stale-while-revalidate=30', age: '100' });
        case '/me':
          return send({ 'cache-control': 'max-age=0, stale-while-revalidate=60' });
        default:
          res.writeHead(404).end();
      }
    });
    const route = (path: string, cache = 'true') =>
      `  - { method: GET, route: ${path}, service: ${backend.host}, path: ${path}, cache: ${cache} }`;
    gw = await startGateway(`
config:
  http2: { cleartext: true }
  auth: { secret: ${SECRET} }
  compression: { algorithms: [gzip] }
routes:
${[
  '/etag',
  '/slow-reval',
  '/head',
  '/head-first',
  '/chromium',
  '/lm',
  '/changing',
  '/swr',
  '/swr-304',
  '/swr-h2',
  '/swr-fail',
  '/swr-old',
]
  .map((p) => route(p))
  .join('\n')}
${route('/swr-route', '{ staleWhileRevalidateSec: 30 }')}
${route('/gz', 'true, compression: true')}
${route('/sie', '{ staleIfErrorSec: 30 }')}
${route('/swr-gz', 'true, compression: true')}
  - method: GET
    route: /mine
    service: ${backend.host}
    path: /me
    protected: true
    cache: { keyBy: [claims.sub] }
    headers: { request: { set: { X-Sub: "{claims.sub}" } } }
`);
  });
  after(() => closeAll(gw, backend));

  it('revalidates a stale answer with If-None-Match; the 304 refreshes its head and freshness', async () => {
    const first = await get(`${gw.url}/api/etag`);
    assert.match(first.h('cache-status') ?? '', /fwd=uri-miss/);
    const second = await get(`${gw.url}/api/etag`);
    assert.equal(second.status, 200);
    assert.equal(second.text, first.text, 'the stored body');
    assert.equal(second.h('cache-status'), 'Portico; fwd=stale; fwd-status=304');
    assert.equal(second.h('x-checked'), '2', "the 304's fields replace the stored ones");
    assert.equal(second.h('cache-control'), 'max-age=60');
    assert.equal(second.h('content-length'), String(first.body.length));
    assert.equal(conditionals('/etag').length, 1);
    assert.equal(conditionals('/etag')[0]!['if-none-match'], '"v1"');
    const third = await get(`${gw.url}/api/etag`);
    assert.equal(third.h('cache-status'), 'Portico; hit', 'fresh again');
    assert.equal(third.text, first.text);
    assert.equal(count('/etag'), 2);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    const revalidated = /^portico_cache_requests_total\{[^}]*result="revalidated"[^}]*\} (\d+)/m.exec(metrics);
    assert.ok(revalidated !== null && Number(revalidated[1]) >= 1, 'counted as revalidated');
  });

  it('revalidates with If-Modified-Since when the answer has only Last-Modified', async () => {
    const first = await get(`${gw.url}/api/lm`);
    const second = await get(`${gw.url}/api/lm`);
    assert.equal(conditionals('/lm')[0]!['if-modified-since'], LM);
    assert.equal(conditionals('/lm')[0]!['if-none-match'], undefined);
    assert.equal(second.h('cache-status'), 'Portico; fwd=stale; fwd-status=304');
    assert.equal(second.text, first.text);
    assert.equal((await get(`${gw.url}/api/lm`)).h('cache-status'), 'Portico; hit');
  });

  it('replaces the entry when the backend answers 200 to the revalidation', async () => {
    await get(`${gw.url}/api/changing`);
    const second = await get(`${gw.url}/api/changing`);
    assert.equal(conditionals('/changing')[0]!['if-none-match'], '"v1"');
    assert.equal(second.n(), 2);
    assert.equal(second.h('cache-status'), 'Portico; fwd=stale');
    assert.equal(second.h('etag'), '"v2"');
    const third = await get(`${gw.url}/api/changing`);
    assert.equal(conditionals('/changing')[1]!['if-none-match'], '"v2"', 'the new entry was stored');
    assert.equal(third.n(), 3);
  });

  it("answers the client's own validators with 304 once the entry is revalidated, and never forwards them", async () => {
    await get(`${gw.url}/api/head`);
    const before = conditionals('/head').length;
    const matching = await get(`${gw.url}/api/head`, { 'if-none-match': 'W/"v1"', 'cache-control': 'no-cache' });
    assert.equal(matching.status, 304);
    assert.equal(matching.body.length, 0);
    assert.equal(matching.h('etag'), '"v1"');
    const other = await get(`${gw.url}/api/head`, { 'if-none-match': '"other"', 'cache-control': 'max-age=0' });
    assert.equal(other.status, 200);
    assert.equal(other.h('cache-status'), 'Portico; fwd=stale; fwd-status=304', 'request max-age=0 revalidates');
    const sent = conditionals('/head').slice(before);
    assert.equal(sent.length, 2, 'no-cache and max-age=0 revalidate a fresh entry');
    assert.ok(
      sent.every((h) => h['if-none-match'] === '"v1"'),
      "the stored tag, never the client's",
    );
  });

  it('stores no HEAD answer, and revalidates a stale entry for a HEAD request', async () => {
    const miss = await get(`${gw.url}/api/head-first`, {}, 'HEAD');
    assert.equal(miss.status, 200);
    assert.equal(miss.body.length, 0);
    const full = await get(`${gw.url}/api/head-first`);
    assert.equal(full.h('cache-status'), 'Portico; fwd=uri-miss', 'the HEAD answer was not stored in its place');
    assert.equal(full.n(), 2);
    const head = await get(`${gw.url}/api/head-first`, {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.h('cache-status'), 'Portico; fwd=stale; fwd-status=304');
    const hit = await get(`${gw.url}/api/head-first`);
    assert.equal(hit.h('cache-status'), 'Portico; hit');
    assert.equal(hit.text, full.text);
  });

  it('collapses concurrent revalidations of one key into one backend request', async () => {
    const stored = await get(`${gw.url}/api/slow-reval`);
    const before = count('/slow-reval');
    const h = hold('/slow-reval');
    const answers = Array.from({ length: 10 }, () => get(`${gw.url}/api/slow-reval`));
    await h.arrived;
    const inFlight = async () => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      return Number(/^portico_requests_in_flight (\d+)/m.exec(text)?.[1] ?? 0);
    };
    while ((await inFlight()) < 10) await new Promise((resolve) => setImmediate(resolve));
    h.release();
    const done = await Promise.all(answers);
    assert.equal(count('/slow-reval'), before + 1);
    assert.ok(done.every((d) => d.status === 200 && d.text === stored.text));
    assert.equal(done.filter((d) => d.h('cache-status') === 'Portico; fwd=stale; fwd-status=304').length, 1);
    assert.equal(done.filter((d) => d.h('cache-status') === 'Portico; hit; detail=collapsed').length, 9);
  });

  it('serves stale at once inside stale-while-revalidate, with one background refresh per key', async () => {
    const first = await get(`${gw.url}/api/swr`);
    assert.equal(first.n(), 1);
    const h = hold('/swr');
    const stale = await get(`${gw.url}/api/swr`);
    assert.equal(stale.h('cache-status'), 'Portico; hit; fwd=stale');
    assert.equal(stale.n(), 1, 'the stale answer, at once');
    await h.arrived;
    // While the refresh waits at the backend, more requests get the stale answer and start none.
    for (let i = 0; i < 5; i++) {
      const again = await get(`${gw.url}/api/swr`);
      assert.equal(again.h('cache-status'), 'Portico; hit; fwd=stale');
      assert.equal(again.n(), 1);
    }
    assert.equal(count('/swr'), 2, 'one background refresh');
    assert.equal(conditionals('/swr')[0]!['if-none-match'], '"s1"');
    h.release();
    let fresh = await get(`${gw.url}/api/swr`);
    while (fresh.n() === 1) fresh = await get(`${gw.url}/api/swr`);
    assert.equal(fresh.n(), 2);
    assert.equal(fresh.h('cache-status'), 'Portico; hit');
    assert.equal(count('/swr'), 2);
  });

  it("refreshes in the background with a 304, and by the route's staleWhileRevalidateSec", async () => {
    for (const path of ['/swr-304', '/swr-route']) {
      await get(`${gw.url}/api${path}`);
      const h = hold(path);
      const stale = await get(`${gw.url}/api${path}`);
      assert.equal(stale.h('cache-status'), 'Portico; hit; fwd=stale', path);
      await h.arrived;
      h.release();
      let next = await get(`${gw.url}/api${path}`);
      while (next.h('cache-status') !== 'Portico; hit') next = await get(`${gw.url}/api${path}`);
      assert.equal(next.n(), 1, `${path}: the stored body, refreshed by the 304`);
      assert.equal(next.h('cache-control'), 'max-age=60');
      assert.equal(count(path), 2, path);
    }
  });

  it('keeps the stale entry when the background refresh fails', async () => {
    swrFailing = false;
    await get(`${gw.url}/api/swr-fail`);
    swrFailing = true;
    // Each answer is the stale one; a new refresh starts only once the failed one ended.
    while (count('/swr-fail') < 3) {
      const stale = await get(`${gw.url}/api/swr-fail`);
      assert.equal(stale.status, 200);
      assert.equal(stale.n(), 1);
      assert.equal(stale.h('cache-status'), 'Portico; hit; fwd=stale');
    }
    swrFailing = false;
  });

  it('goes to the backend past the stale-while-revalidate window', async () => {
    await get(`${gw.url}/api/swr-old`);
    const second = await get(`${gw.url}/api/swr-old`);
    assert.equal(second.h('cache-status'), 'Portico; fwd=stale', 'age 100 > max-age 10 + 30');
    assert.equal(second.n(), 2);
  });

  it("refreshes a user's entry with that user's identity only", async () => {
    const alice = `Bearer ${await sign('alice')}`;
    const bob = `Bearer ${await sign('bob')}`;
    assert.equal(JSON.parse((await get(`${gw.url}/api/mine`, { authorization: alice })).text).user, 'alice');
    assert.equal(JSON.parse((await get(`${gw.url}/api/mine`, { authorization: bob })).text).user, 'bob');
    const before = backend.seen.length;
    const stale = await get(`${gw.url}/api/mine`, { authorization: alice });
    assert.equal(stale.h('cache-status'), 'Portico; hit; fwd=stale');
    assert.equal(JSON.parse(stale.text).user, 'alice');
    let b = await get(`${gw.url}/api/mine`, { authorization: bob });
    assert.equal(JSON.parse(b.text).user, 'bob');
    // Wait for alice's refresh (and bob's) to reach the backend: each carries its own identity.
    while (backend.seen.length < before + 2) b = await get(`${gw.url}/api/mine`, { authorization: bob });
    const refreshes = backend.seen.slice(before).filter((r) => r.url === '/me');
    assert.deepEqual(new Set(refreshes.map((r) => r.headers['x-sub'])), new Set(['alice', 'bob']));
    assert.equal(JSON.parse(b.text).user, 'bob', "bob never gets alice's refreshed answer");
  });

  it('revalidates the stored compressed variant, in the foreground and in the background', async () => {
    const gzip = { 'accept-encoding': 'gzip' };
    const first = await get(`${gw.url}/api/gz`, gzip);
    assert.equal(first.h('content-encoding'), 'gzip');
    assert.equal(first.h('etag'), 'W/"g1"', 'weak: the gateway compressed it');
    const second = await get(`${gw.url}/api/gz`, gzip);
    assert.equal(second.h('cache-status'), 'Portico; fwd=stale; fwd-status=304');
    assert.equal(second.h('content-encoding'), 'gzip');
    assert.equal(second.h('etag'), 'W/"g1"');
    assert.equal(JSON.parse(gunzipSync(second.body).toString()).n, 1);
    await get(`${gw.url}/api/swr-gz`, gzip);
    const stale = await get(`${gw.url}/api/swr-gz`, gzip);
    assert.equal(stale.h('cache-status'), 'Portico; hit; fwd=stale');
    let fresh = await get(`${gw.url}/api/swr-gz`, gzip);
    while (fresh.h('cache-status') !== 'Portico; hit') fresh = await get(`${gw.url}/api/swr-gz`, gzip);
    assert.equal(fresh.h('content-encoding'), 'gzip');
    assert.equal(JSON.parse(gunzipSync(fresh.body).toString()).n, 1, 'the stored gzip body, refreshed by a 304');
    assert.equal(count('/swr-gz'), 2);
    const plain = await get(`${gw.url}/api/swr-gz`);
    assert.equal(plain.h('content-encoding'), undefined, 'the identity variant is its own entry');
  });

  it('revalidates and serves stale-while-revalidate over HTTP/2', async () => {
    await get(`${gw.url}/api/swr-h2`);
    const stale = await getH2(gw.url, '/api/swr-h2');
    assert.equal(stale.head[':status'], 200);
    assert.equal(stale.head['cache-status'], 'Portico; hit; fwd=stale');
    assert.equal(JSON.parse(stale.text).n, 1);
    // The background refresh of an HTTP/2 request's stale answer: its 304 makes the entry fresh.
    let fresh = await getH2(gw.url, '/api/swr-h2');
    while (fresh.head['cache-status'] !== 'Portico; hit') fresh = await getH2(gw.url, '/api/swr-h2');
    assert.equal(JSON.parse(fresh.text).n, 1);
    assert.equal(conditionals('/swr-h2').length, 1);
    await get(`${gw.url}/api/changing`);
    const reval = await getH2(gw.url, '/api/changing');
    assert.equal(reval.head['cache-status'], 'Portico; fwd=stale');
    const etagBefore = conditionals('/etag').length;
    // A fresh /etag revalidated on the client's no-cache, over HTTP/2.
    const session = connect(gw.url);
    try {
      const head = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const stream = session.request({ ':path': '/api/etag', 'cache-control': 'no-cache' });
        let h: Record<string, unknown> = {};
        stream.on('response', (x) => (h = x));
        stream.resume();
        stream.on('end', () => resolve(h));
        stream.on('error', reject);
      });
      assert.equal(head[':status'], 200);
      assert.equal(head['cache-status'], 'Portico; fwd=stale; fwd-status=304');
    } finally {
      session.close();
    }
    assert.equal(conditionals('/etag').length, etagBefore + 1);
    // A failed revalidation inside the stale-if-error window: the stored body, over HTTP/2 too.
    const good = await get(`${gw.url}/api/sie`);
    sieFailing = true;
    const sie = await getH2(gw.url, '/api/sie');
    sieFailing = false;
    assert.equal(sie.head[':status'], 200);
    assert.equal(sie.head['cache-status'], 'Portico; hit; detail=stale-if-error; fwd-status=503');
    assert.equal(sie.text, good.text);
    assert.equal(conditionals('/sie')[0]!['if-none-match'], '"i1"');
  });

  it('Chromium revalidates with If-None-Match and gets 304', async () => {
    assert.ok(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: apt-get install -y chromium, as .ci/run does`);
    const browser = await chromium.launch({ executablePath: CHROMIUM });
    try {
      const page = await browser.newPage();
      // The status on the wire: Chromium reports a revalidated answer to the page as its cached 200.
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.enable');
      const wire: { status: number; headers: Record<string, string> }[] = [];
      cdp.on('Network.responseReceivedExtraInfo', (e) => wire.push({ status: e.statusCode, headers: e.headers }));
      const first = await page.goto(`${gw.url}/api/chromium`);
      assert.equal(first?.status(), 200);
      const again = await page.reload();
      assert.ok(again);
      const sent = await again.request().allHeaders();
      assert.equal(sent['if-none-match'], '"v1"', 'Chromium revalidates its copy');
      const notModified = wire.filter((w) => w.status === 304);
      assert.equal(notModified.length, 1, 'the gateway answered 304');
      assert.equal(notModified[0]!.headers['cache-status'], 'Portico; fwd=stale; fwd-status=304');
      assert.equal(conditionals('/chromium').length, 1, 'the gateway revalidated its stale entry first');
      assert.equal(JSON.parse(await again.text()).n, 1, 'Chromium shows its copy');
    } finally {
      await browser.close();
    }
  });
});

describe('the example of docs/caching.md "Serving stale while revalidating"', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((req, res) => {
      if (req.headers['if-none-match'] === '"d1"') {
        res.writeHead(304, { 'cache-control': 'max-age=60', etag: '"d1"' });
        return res.end();
      }
      const cc = req.url === '/swr' ? 'max-age=0, stale-while-revalidate=60' : 'max-age=0';
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': cc, etag: '"d1"' });
      res.end(JSON.stringify({ url: req.url }));
    });
    gw = await startGateway(docExample('caching.md', '### Serving stale while revalidating', backend.host));
  });
  after(() => closeAll(gw, backend));

  it('serves both routes stale at once and refreshes them in the background', async () => {
    for (const path of ['/swr', '/swr-route']) {
      const first = await get(`${gw.url}/api${path}`);
      assert.equal(first.status, 200, path);
      const stale = await get(`${gw.url}/api${path}`);
      assert.equal(stale.h('cache-status'), 'Portico; hit; fwd=stale', path);
      assert.equal(stale.text, first.text);
      let fresh = await get(`${gw.url}/api${path}`);
      while (fresh.h('cache-status') !== 'Portico; hit') fresh = await get(`${gw.url}/api${path}`);
      assert.equal(fresh.h('cache-control'), 'max-age=60', `${path}: refreshed by the 304`);
    }
  });
});

describe('staleWhileRevalidateSec in portico check', () => {
  it('accepts it and refuses a bad value at its line', async () => {
    const { loadConfigText } = await import('../../src/config/load.js');
    const { formatProblem } = await import('../../src/config/problems.js');
    const good = loadConfigText(
      'routes:\n  - { method: GET, route: /a, service: "127.0.0.1:9", path: /a, cache: { staleWhileRevalidateSec: 30 } }\n',
      'gateway.yaml',
      {},
    );
    assert.equal(good.ok, true);
    const bad = loadConfigText(
      `routes:
  - { method: GET, route: /a, service: "127.0.0.1:9", path: /a }
  - { method: GET, route: /b, service: "127.0.0.1:9", path: /b, cache: { staleWhileRevalidateSec: -1 } }
`,
      'gateway.yaml',
      {},
    );
    assert.equal(bad.ok, false);
    const problems = bad.ok ? [] : bad.problems.map(formatProblem);
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /gateway\.yaml:3:\d+.*staleWhileRevalidateSec/);
  });
});
