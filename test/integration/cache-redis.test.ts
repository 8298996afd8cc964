/**
 * The HTTP cache's shared level (`config.cache.redis`, docs/caching.md "Shared by replicas"): two
 * gateways on one real redis-server in front of one backend that counts its calls. A miss on one
 * fills Redis and the other hits without a backend call (HTTP/1.1 and HTTP/2); Vary'd variants;
 * the size limit; invalidation and purge reach both levels; a frozen or killed Redis costs no
 * request, counted as fallbacks.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { adminRequest } from '../support/admin.js';
import { h2request } from '../support/http2.js';
import { closeAll } from '../support/close-all.js';
import { waitFor } from '../support/wait-for.js';

/** Replicas behind one name: the cache keys answers by Host, so both are sent the same one. */
const HOST = 'api.example.test';
const KEY_PREFIX = 'cr:';

describe('the HTTP cache shared through Redis', () => {
  let redis: TestRedis;
  let inspect: Redis;
  let backend: TestBackend;
  let one: TestGateway;
  let two: TestGateway;
  const calls = new Map<string, number>();
  const count = (path: string) => calls.get(path) ?? 0;

  before(async () => {
    redis = await startRedis();
    inspect = new Redis(redis.url, { keyPrefix: KEY_PREFIX, lazyConnect: true });
    await inspect.connect();
    backend = await startBackend((req, res) => {
      const url = req.url ?? '';
      const path = url.split('?')[0]!;
      calls.set(path, count(path) + 1);
      if (req.method !== 'GET') {
        res.writeHead(204);
        return res.end();
      }
      const lang = String(req.headers['x-lang'] ?? '');
      const big = path === '/big';
      const body = big ? 'x'.repeat(3000) : JSON.stringify({ path, n: count(path), lang });
      res.writeHead(200, {
        'content-type': 'application/json',
        'cache-control': 'max-age=60',
        ...(path === '/lang' ? { vary: 'X-Lang' } : {}),
      });
      res.end(body);
    });
    const yaml = `
config:
  http2: { cleartext: true }
  redis: { url: "${redis.url}", keyPrefix: "${KEY_PREFIX}", commandTimeoutMs: 300 }
  cache: { redis: { maxEntryBytes: 2048 }, maxEntryBytes: 65536 }
  admin: { port: 0 }
routes:
  - { method: GET, route: "/items/{id}", service: ${backend.host}, path: "/items/{id}", cache: { staleIfErrorSec: 30 } }
  - { method: POST, route: "/items/{id}", service: ${backend.host}, path: "/items/{id}" }
  - { method: GET, route: /lang, service: ${backend.host}, path: /lang, cache: true }
  - { method: GET, route: /big, service: ${backend.host}, path: /big, cache: true }
  - { method: GET, route: /keyed, service: ${backend.host}, path: /keyed, cache: { keyBy: ["header:X-Token"] } }
  - { method: GET, route: "/other/{id}", service: ${backend.host}, path: "/other/{id}", cache: true }
`;
    one = await startGateway(yaml);
    two = await startGateway(yaml);
  });
  after(async () => {
    inspect?.disconnect();
    await closeAll(one, two, backend);
    await redis?.stop();
  });

  const get = (gw: TestGateway, path: string, headers: Record<string, string> = {}) =>
    gw.get(path, { headers: { host: HOST, ...headers } });
  const metric = async (gw: TestGateway, pattern: RegExp) => {
    const text = (await gw.get('/metrics')).text;
    const match = pattern.exec(text);
    return match === null ? 0 : Number(match[1]);
  };

  it('a miss on one gateway fills Redis; the other hits without calling the backend', async () => {
    const first = await get(one, '/api/items/1');
    assert.equal(first.status, 200);
    assert.match(String(first.headers['cache-status']), /fwd=uri-miss/);
    assert.equal(count('/items/1'), 1);
    await waitForKey(inspect, `hc:${HOST}\u0000/api/items/1`);
    const ttl = await inspect.pttl(`hc:${HOST}\u0000/api/items/1`);
    assert.ok(ttl > 60_000 && ttl <= 90_000, `kept for freshness (60 s) plus stale-if-error (30 s): ${ttl} ms`);

    const second = await get(two, '/api/items/1');
    assert.equal(second.status, 200);
    assert.equal(second.text, first.text);
    assert.equal(second.headers['cache-status'], 'Portico; hit; detail=shared');
    assert.equal(second.headers['content-type'], 'application/json');
    assert.ok(Number(second.headers.age) >= 0);
    assert.equal(count('/items/1'), 1, 'no second backend call');
    // Now in the second gateway's memory too: a plain hit.
    assert.equal((await get(two, '/api/items/1')).headers['cache-status'], 'Portico; hit');
  });

  it('serves a shared hit over HTTP/2 as well', async () => {
    await get(one, '/api/items/h2');
    await waitForKey(inspect, `hc:${HOST}\u0000/api/items/h2`);
    const session = connect(two.url);
    try {
      const answer = await h2request(session, '/api/items/h2', { ':authority': HOST });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['cache-status'], 'Portico; hit; detail=shared');
      assert.deepEqual(JSON.parse(answer.body), { path: '/items/h2', n: 1, lang: '' });
    } finally {
      session.close();
    }
    assert.equal(count('/items/h2'), 1);
  });

  it('keeps one variant per Vary value and finds each from the other gateway', async () => {
    await get(one, '/api/lang', { 'x-lang': 'en' });
    await get(one, '/api/lang', { 'x-lang': 'fr' });
    assert.equal(count('/lang'), 2);
    await waitFor(async () => (await inspect.hlen(`hc:${HOST}\u0000/api/lang`)) === 4);
    const fr = await get(two, '/api/lang', { 'x-lang': 'fr' });
    assert.equal(fr.headers['cache-status'], 'Portico; hit; detail=shared');
    assert.equal((fr.json() as { lang: string }).lang, 'fr');
    const de = await get(two, '/api/lang', { 'x-lang': 'de' });
    assert.match(String(de.headers['cache-status']), /fwd=/);
    assert.equal(count('/lang'), 3);
  });

  it('writes no identity into Redis: a variant keyed by a header is found by its hash', async () => {
    const token = 'a-secret-token-value-0123456789';
    await get(one, '/api/keyed', { 'x-token': token });
    await waitForKey(inspect, `hc:${HOST}\u0000/api/keyed`);
    const fields = await inspect.hgetallBuffer(`hc:${HOST}\u0000/api/keyed`);
    assert.equal(Object.keys(fields).length, 3);
    for (const [name, value] of Object.entries(fields)) {
      assert.ok(!name.includes(token), name);
      assert.ok(!value.includes(token), name);
    }
    assert.equal(
      (await get(two, '/api/keyed', { 'x-token': token })).headers['cache-status'],
      'Portico; hit; detail=shared',
    );
    assert.match(String((await get(two, '/api/keyed', { 'x-token': 'another' })).headers['cache-status']), /fwd=/);
  });

  it('writes no answer larger than cache.redis.maxEntryBytes: it stays in memory only', async () => {
    assert.equal((await get(one, '/api/big')).status, 200);
    assert.equal((await get(one, '/api/big')).headers['cache-status'], 'Portico; hit');
    // A key written after this one shows the big one's write would have arrived first.
    await get(one, '/api/items/after-big');
    await waitForKey(inspect, `hc:${HOST}\u0000/api/items/after-big`);
    assert.equal(await inspect.exists(`hc:${HOST}\u0000/api/big`), 0);
    assert.match(String((await get(two, '/api/big')).headers['cache-status']), /fwd=uri-miss/);
    assert.equal(count('/big'), 2);
  });

  it('an unsafe request through one gateway invalidates the shared entry', async () => {
    await get(one, '/api/items/2');
    await waitForKey(inspect, `hc:${HOST}\u0000/api/items/2`);
    const res = await request(`${one.url}/api/items/2`, { method: 'POST', headers: { host: HOST } });
    await res.body.dump();
    assert.equal(res.statusCode, 204);
    await waitFor(async () => (await inspect.exists(`hc:${HOST}\u0000/api/items/2`)) === 0);
    assert.match(String((await get(two, '/api/items/2')).headers['cache-status']), /fwd=uri-miss/);
    assert.equal(count('/items/2'), 3, 'the GET, the POST, then the GET after it');
  });

  it('purges by URL, prefix and route from memory and Redis, and says how many answers went', async () => {
    const admin = one.gateway.adminAddress()!.port;
    const purge = async (body: unknown) => {
      const reply = await adminRequest(admin, '/api/cache/purge', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(reply.status, 200, reply.text);
      return reply.json() as { purged: { memory: number; redis: number | null } };
    };
    for (const id of ['p1', 'p2', 'p3']) await get(one, `/api/items/${id}`);
    for (const id of ['o1', 'o2']) await get(one, `/api/other/${id}`);
    await waitForKey(inspect, `hc:${HOST}\u0000/api/other/o2`);

    assert.deepEqual(await purge({ url: `http://${HOST}/api/items/p1` }), { purged: { memory: 1, redis: 1 } });
    assert.equal(await inspect.exists(`hc:${HOST}\u0000/api/items/p1`), 0);
    assert.match(String((await get(two, '/api/items/p1')).headers['cache-status']), /fwd=uri-miss/);

    const byPrefix = await purge({ prefix: '/api/items/p' });
    // p2 and p3 from memory; from Redis p1 too, which the second gateway has just fetched and written.
    assert.deepEqual(byPrefix, { purged: { memory: 2, redis: 3 } });

    const byRoute = await purge({ route: 'GET /other/{id}' });
    assert.deepEqual(byRoute, { purged: { memory: 2, redis: 2 } });
    assert.equal(await inspect.exists(`hc:${HOST}\u0000/api/other/o1`), 0);
    assert.equal(await inspect.exists(`hc:${HOST}\u0000/api/items/1`), 1, 'other routes keep theirs');
    assert.match(String((await get(one, '/api/other/o1')).headers['cache-status']), /fwd=uri-miss/);
  });

  it('a frozen Redis costs a request at most commandTimeoutMs; a killed one nothing; both counted', async () => {
    const before = await metric(two, /^portico_redis_fallbacks_total\{use="http-cache"\} (\d+)/m);
    redis.freeze();
    try {
      const started = performance.now();
      const slow = await get(two, '/api/items/frozen');
      assert.equal(slow.status, 200);
      assert.ok(performance.now() - started < 5_000, 'bounded by the command timeout, not by Redis');
    } finally {
      redis.thaw();
    }
    await redis.stop();
    for (const id of ['down1', 'down2']) assert.equal((await get(two, `/api/items/${id}`)).status, 200);
    assert.equal((await get(two, '/api/items/down1')).headers['cache-status'], 'Portico; hit', 'memory still serves');
    const after = await metric(two, /^portico_redis_fallbacks_total\{use="http-cache"\} (\d+)/m);
    assert.ok(after >= before + 3, `fallbacks counted: ${before} -> ${after}`);
  });
});

/** The writes are sent in the background: a test waits for the key rather than for time. */
async function waitForKey(redis: Redis, key: string): Promise<void> {
  await waitFor(async () => (await redis.exists(key)) === 1, 5_000, key);
}
