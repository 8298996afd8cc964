/**
 * The shared HTTP cache end to end (docs/caching.md): a real gateway in front of a real backend
 * that counts its calls. Freshness, Age and Cache-Status; what is never stored; answers that must
 * not leak between users; auth before a hit; Vary; request directives; the client's validators;
 * invalidation by unsafe methods; request collapsing; stale-if-error; variants per coding with
 * compression; HTTP/2.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { fetchFlat } from '../support/http.js';
import { hs256Signer } from '../support/tokens.js';

const SECRET = 'caching-test-secret-0123456789abcdef0123456789';
const signClaims = hs256Signer(SECRET, { expiresIn: '5m' });
const sign = (sub: string) => signClaims({ sub });

const get = fetchFlat;

describe('the shared HTTP cache', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  /** Calls per path, counted by the backend. */
  const calls = new Map<string, number>();
  const count = (path: string) => calls.get(path) ?? 0;
  let failing = false;
  let slowRelease: (() => void) | undefined;

  before(async () => {
    backend = await startBackend((req, res) => {
      const url = req.url ?? '';
      const path = url.split('?')[0]!;
      calls.set(path, count(path) + 1);
      const n = count(path);
      const send = (headers: Record<string, string>, body = JSON.stringify({ path, n })) => {
        res.writeHead(200, { 'content-type': 'application/json', ...headers });
        res.end(body);
      };
      if (req.method !== 'GET') return send({});
      switch (path) {
        case '/fresh':
        case '/fresh2':
          return send({
            'cache-control': 'max-age=60',
            etag: '"e1"',
            'last-modified': 'Mon, 02 Nov 2026 10:00:00 GMT',
          });
        case '/silent':
          return send({});
        case '/no-store':
          return send({ 'cache-control': 'no-store, max-age=60' });
        case '/private':
          return send({ 'cache-control': 'private, max-age=60' });
        case '/cookie':
          return send({ 'cache-control': 'max-age=60', 'set-cookie': 'session=abc' });
        case '/me':
          return send(
            { 'cache-control': 'max-age=60' },
            JSON.stringify({ user: req.headers['x-sub'] ?? req.headers.authorization ?? 'anonymous', n }),
          );
        case '/public-me':
          return send({ 'cache-control': 'public, max-age=60' });
        case '/lang':
          return send(
            { 'cache-control': 'max-age=60', vary: 'Accept-Language' },
            JSON.stringify({ lang: req.headers['accept-language'], n }),
          );
        case '/slow':
          return void new Promise<void>((resolve) => (slowRelease = resolve)).then(() =>
            send({ 'cache-control': 'max-age=60' }),
          );
        case '/flaky':
          if (failing) {
            res.writeHead(503, { 'content-type': 'application/json' });
            return res.end('{"down":true}');
          }
          return send({ 'cache-control': 'max-age=0, stale-if-error=60' });
        case '/big':
          return send({ 'cache-control': 'max-age=60' }, JSON.stringify({ pad: 'x'.repeat(5000), n }));
        case '/compressible':
          return send({ 'cache-control': 'max-age=60' }, JSON.stringify({ pad: 'y'.repeat(4000), n }));
        default:
          res.writeHead(404).end();
      }
    });
    const route = (path: string, extra = '') =>
      `  - { method: GET, route: ${path}, service: ${backend.host}, path: ${path}, cache: true${extra} }`;
    gw = await startGateway(`
config:
  http2: { cleartext: true }
  auth: { secret: ${SECRET} }
  cache: { maxEntryBytes: 4096 }
  compression: { algorithms: [br, gzip] }
routes:
${route('/fresh')}
${route('/fresh2')}
${route('/no-store')}
${route('/private')}
${route('/cookie')}
${route('/public-me')}
${route('/lang')}
${route('/slow')}
${route('/big')}
${route('/me')}
${route('/compressible', ', compression: true')}
  - { method: GET, route: /silent, service: ${backend.host}, path: /silent, cache: true }
  - { method: GET, route: /silent-ttl, service: ${backend.host}, path: /silent, cache: { ttlSec: 60 } }
  - { method: GET, route: /flaky, service: ${backend.host}, path: /flaky, cache: { staleIfErrorSec: 30 } }
  - { method: POST, route: /fresh, service: ${backend.host}, path: /fresh }
  - method: GET
    route: /mine
    service: ${backend.host}
    path: /me
    protected: true
    cache: { keyBy: [claims.sub] }
    headers: { request: { set: { X-Sub: "{claims.sub}" } } }
  - { method: GET, route: /shared-auth, service: ${backend.host}, path: /me, protected: true, cache: true }
`);
  });
  after(() => closeAll(gw, backend));

  it('serves a fresh answer from the store with Age and Cache-Status, without calling the backend', async () => {
    const first = await get(`${gw.url}/api/fresh`);
    assert.equal(first.status, 200);
    assert.match(first.h('cache-status') ?? '', /^Portico; fwd=uri-miss/);
    const second = await get(`${gw.url}/api/fresh`);
    assert.equal(second.text, first.text);
    assert.equal(count('/fresh'), 1);
    assert.equal(second.h('cache-status'), 'Portico; hit');
    assert.match(second.h('age') ?? '', /^\d+$/);
    assert.equal(second.h('etag'), '"e1"');
    assert.equal(second.h('content-length'), String(first.body.length));
    assert.ok(second.h('x-request-id') !== first.h('x-request-id'), 'each answer has its own request id');
  });

  it('stores an answer without freshness only when the route gives a ttlSec', async () => {
    await get(`${gw.url}/api/silent`);
    await get(`${gw.url}/api/silent`);
    assert.equal(count('/silent'), 2);
    await get(`${gw.url}/api/silent-ttl`);
    const hit = await get(`${gw.url}/api/silent-ttl`);
    assert.equal(count('/silent'), 3);
    assert.equal(hit.h('cache-status'), 'Portico; hit');
  });

  it('never stores no-store, private or Set-Cookie answers', async () => {
    for (const path of ['/no-store', '/private', '/cookie']) {
      await get(`${gw.url}/api${path}`);
      const again = await get(`${gw.url}/api${path}`);
      assert.equal(count(path), 2, path);
      assert.notEqual(again.h('cache-status'), 'Portico; hit');
    }
  });

  it("never serves one user's answer to another: a request with credentials is not shared unless the answer says public", async () => {
    const alice = `Bearer ${await sign('alice')}`;
    const bob = `Bearer ${await sign('bob')}`;
    const a = await get(`${gw.url}/api/shared-auth`, { authorization: alice });
    const b = await get(`${gw.url}/api/shared-auth`, { authorization: bob });
    assert.equal(count('/me'), 2, 'the second user went to the backend');
    assert.notEqual(a.text, b.text);
    // A cookie counts as a credential too.
    await get(`${gw.url}/api/me`, { cookie: 'session=alice' });
    const other = await get(`${gw.url}/api/me`, { cookie: 'session=bob' });
    assert.equal(count('/me'), 4);
    assert.notEqual(other.h('cache-status'), 'Portico; hit');
    // An answer marked public is shared (RFC 9111 3.5).
    await get(`${gw.url}/api/public-me`, { authorization: alice });
    const shared = await get(`${gw.url}/api/public-me`, { authorization: bob });
    assert.equal(count('/public-me'), 1);
    assert.equal(shared.h('cache-status'), 'Portico; hit');
  });

  it('keys entries by identity with keyBy, and checks the token before any cached answer', async () => {
    const before = count('/me');
    const alice = `Bearer ${await sign('alice')}`;
    const bob = `Bearer ${await sign('bob')}`;
    const a1 = await get(`${gw.url}/api/mine`, { authorization: alice });
    const a2 = await get(`${gw.url}/api/mine`, { authorization: alice });
    const b1 = await get(`${gw.url}/api/mine`, { authorization: bob });
    assert.equal(JSON.parse(a1.text).user, 'alice');
    assert.equal(a2.h('cache-status'), 'Portico; hit');
    assert.equal(a2.text, a1.text);
    assert.equal(JSON.parse(b1.text).user, 'bob', "bob never gets alice's answer");
    assert.equal(count('/me'), before + 2);
    const anonymous = await get(`${gw.url}/api/mine`);
    assert.equal(anonymous.status, 401);
    const forged = await get(`${gw.url}/api/mine`, { authorization: 'Bearer not.a.token' });
    assert.equal(forged.status, 401);
  });

  it('keeps one variant per value of the headers the answer varies on', async () => {
    const en = await get(`${gw.url}/api/lang`, { 'accept-language': 'en' });
    const fr = await get(`${gw.url}/api/lang`, { 'accept-language': 'fr' });
    const en2 = await get(`${gw.url}/api/lang`, { 'accept-language': 'en' });
    assert.equal(JSON.parse(en.text).lang, 'en');
    assert.equal(JSON.parse(fr.text).lang, 'fr');
    assert.equal(en2.text, en.text);
    assert.equal(count('/lang'), 2);
  });

  it("honours the request's no-cache, max-age and only-if-cached", async () => {
    await get(`${gw.url}/api/fresh2`);
    await get(`${gw.url}/api/fresh2`, { 'cache-control': 'no-cache' });
    assert.equal(count('/fresh2'), 2);
    await get(`${gw.url}/api/fresh2`, { pragma: 'no-cache' });
    assert.equal(count('/fresh2'), 3);
    const fresh = await get(`${gw.url}/api/fresh2`, { 'cache-control': 'max-age=3600' });
    assert.equal(fresh.h('cache-status'), 'Portico; hit');
    const onlyCached = await get(`${gw.url}/api/silent`, { 'cache-control': 'only-if-cached' });
    assert.equal(onlyCached.status, 504);
    assert.equal(onlyCached.h('x-portico-error'), 'GW_CACHE_ONLY_IF_CACHED');
  });

  it("answers the client's If-None-Match and If-Modified-Since from the store with 304", async () => {
    await get(`${gw.url}/api/fresh`);
    const byTag = await get(`${gw.url}/api/fresh`, { 'if-none-match': 'W/"e1"' });
    assert.equal(byTag.status, 304);
    assert.equal(byTag.body.length, 0);
    assert.equal(byTag.h('etag'), '"e1"');
    const byDate = await get(`${gw.url}/api/fresh`, { 'if-modified-since': 'Tue, 03 Nov 2026 10:00:00 GMT' });
    assert.equal(byDate.status, 304);
    const changed = await get(`${gw.url}/api/fresh`, { 'if-none-match': '"other"' });
    assert.equal(changed.status, 200);
    assert.equal(count('/fresh'), 1);
  });

  it('forgets a URI once an unsafe request to it succeeded (RFC 9111 4.4)', async () => {
    const hit = await get(`${gw.url}/api/fresh`);
    assert.equal(hit.h('cache-status'), 'Portico; hit');
    const before = count('/fresh');
    const posted = await get(`${gw.url}/api/fresh`, { 'content-type': 'application/json' }, 'POST');
    assert.equal(posted.status, 200);
    const after = await get(`${gw.url}/api/fresh`);
    assert.match(after.h('cache-status') ?? '', /fwd=uri-miss/);
    assert.equal(count('/fresh'), before + 2, 'the POST, then the GET');
  });

  it('makes one backend request for concurrent misses of one key', async () => {
    const answers = Array.from({ length: 20 }, () => get(`${gw.url}/api/slow`));
    // Released once all 20 are in the gateway: one at the backend, 19 waiting for it.
    const inFlight = async () => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      return Number(/^portico_requests_in_flight (\d+)/m.exec(text)?.[1] ?? 0);
    };
    while (slowRelease === undefined || (await inFlight()) < 20) await new Promise((resolve) => setImmediate(resolve));
    slowRelease();
    const done = await Promise.all(answers);
    assert.equal(count('/slow'), 1);
    assert.ok(done.every((d) => d.status === 200 && d.text === done[0]!.text));
    assert.equal(done.filter((d) => d.h('cache-status') === 'Portico; hit; detail=collapsed').length, 19);
  });

  it('serves a stale answer inside its stale-if-error window when the backend fails', async () => {
    failing = false;
    const good = await get(`${gw.url}/api/flaky`);
    failing = true;
    const stale = await get(`${gw.url}/api/flaky`);
    assert.equal(stale.status, 200);
    assert.equal(stale.text, good.text);
    assert.match(stale.h('cache-status') ?? '', /stale-if-error; fwd-status=503/);
    failing = false;
  });

  it('does not store an answer larger than maxEntryBytes', async () => {
    await get(`${gw.url}/api/big`);
    await get(`${gw.url}/api/big`);
    assert.equal(count('/big'), 2);
  });

  it('stores one encoded variant per coding: a hit costs no compression', async () => {
    const br = await get(`${gw.url}/api/compressible`, { 'accept-encoding': 'br' });
    const gz = await get(`${gw.url}/api/compressible`, { 'accept-encoding': 'gzip' });
    const br2 = await get(`${gw.url}/api/compressible`, { 'accept-encoding': 'gzip;q=0.5, br' });
    const plain = await get(`${gw.url}/api/compressible`);
    assert.equal(br.h('content-encoding'), 'br');
    assert.equal(gz.h('content-encoding'), 'gzip');
    assert.equal(br2.h('content-encoding'), 'br');
    assert.equal(br2.h('cache-status'), 'Portico; hit');
    assert.equal(plain.h('content-encoding'), undefined);
    assert.equal(count('/compressible'), 3, 'one backend call per coding');
    const text = brotliDecompressSync(br2.body).toString();
    assert.equal(text, brotliDecompressSync(br.body).toString(), 'the br hit is the stored br answer');
    assert.equal(JSON.parse(text).n, 1);
    assert.equal(JSON.parse(gunzipSync(gz.body).toString()).n, 2, 'the gzip variant came from its own call');
  });

  it('serves hits over HTTP/2', async () => {
    await get(`${gw.url}/api/fresh`);
    const session = connect(gw.url);
    try {
      const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const stream = session.request({ ':path': '/api/fresh' });
        let h: Record<string, unknown> = {};
        stream.on('response', (x) => (h = x));
        stream.resume();
        stream.on('end', () => resolve(h));
        stream.on('error', reject);
      });
      assert.equal(headers[':status'], 200);
      assert.equal(headers['cache-status'], 'Portico; hit');
      assert.match(String(headers.age), /^\d+$/);
      assert.match(String(headers['x-request-id']), /^[0-9a-f-]{36}$/);
      assert.ok(Number(headers['content-length']) > 0, 'the stored length');
    } finally {
      session.close();
    }
  });
});

describe('cache settings in portico check', () => {
  it('refuses cache on a POST or SSE route and a bad keyBy, each at its line', async () => {
    const { loadConfigText } = await import('../../src/config/load.js');
    const { formatProblem } = await import('../../src/config/problems.js');
    const loaded = loadConfigText(
      `routes:
  - { method: POST, route: /a, service: "127.0.0.1:9", path: /a, cache: true }
  - { method: GET, route: /b, service: "127.0.0.1:9", path: /b, isSSE: true, cache: true }
  - { method: GET, route: /c, service: "127.0.0.1:9", path: /c, cache: { keyBy: [sub] } }
`,
      'gateway.yaml',
      {},
    );
    assert.equal(loaded.ok, false);
    const problems = loaded.ok ? [] : loaded.problems.map(formatProblem);
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.match(problems[0]!, /gateway\.yaml:2:.*only GET routes are cached/);
    assert.match(problems[1]!, /gateway\.yaml:3:.*never cached/);
    assert.match(problems[2]!, /gateway\.yaml:4:.*claims\.NAME or header:NAME/);
  });
});
