/**
 * Purges and invalidations reach every replica's memory (`config.cache.redis.broadcast`,
 * docs/caching.md "Every replica's memory"): two gateways on one real redis-server, both holding
 * an answer in memory; a purge on one's admin listener, or an unsafe request through one, and the
 * other answers a miss. Its own messages are ignored, malformed ones counted, and a Redis killed
 * and started again makes each replica drop its memory once the subscription is back.
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
import type { StatusDocument } from '../../src/admin/types.js';

/** Replicas behind one name: the cache keys answers by Host, so both are sent the same one. */
const HOST = 'api.example.test';
const KEY_PREFIX = 'cb:';
const CHANNEL = `${KEY_PREFIX}hc:broadcast`;

describe('purges and invalidations reach every replica through Redis', () => {
  let redis: TestRedis;
  let inspect: Redis;
  let backend: TestBackend;
  let one: TestGateway;
  let two: TestGateway;
  const calls = new Map<string, number>();
  const count = (path: string) => calls.get(path) ?? 0;

  before(async () => {
    redis = await startRedis();
    inspect = new Redis(redis.url, { lazyConnect: true, retryStrategy: () => null });
    await inspect.connect();
    backend = await startBackend((req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      calls.set(path, count(path) + 1);
      if (req.method !== 'GET') {
        res.writeHead(204);
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' });
      res.end(JSON.stringify({ path, n: count(path) }));
    });
    const yaml = `
config:
  http2: { cleartext: true }
  redis: { url: "${redis.url}", keyPrefix: "${KEY_PREFIX}", commandTimeoutMs: 500 }
  cache: { redis: { broadcast: true } }
  admin: { port: 0 }
routes:
  - { method: GET, route: "/items/{id}", service: ${backend.host}, path: "/items/{id}", cache: true }
  - { method: POST, route: "/items/{id}", service: ${backend.host}, path: "/items/{id}" }
  - { method: PUT, route: "/items/{id}", service: ${backend.host}, path: "/items/{id}" }
  - { method: DELETE, route: "/items/{id}", service: ${backend.host}, path: "/items/{id}" }
  - { method: GET, route: "/other/{id}", service: ${backend.host}, path: "/other/{id}", cache: true }
`;
    one = await startGateway(yaml);
    two = await startGateway(yaml);
    for (const gw of [one, two]) await waitFor(async () => (await subscribed(gw)) === 1, 5_000, 'subscribed');
  });
  after(async () => {
    inspect?.disconnect();
    await closeAll(one, two, backend);
    await redis?.stop();
  });

  const get = (gw: TestGateway, path: string) => gw.get(path, { headers: { host: HOST } });
  const metric = async (gw: TestGateway, pattern: RegExp) => {
    const text = (await gw.get('/metrics')).text;
    const match = pattern.exec(text);
    return match === null ? 0 : Number(match[1]);
  };
  const subscribed = (gw: TestGateway) => metric(gw, /^portico_cache_broadcast_subscribed (\d+)/m);
  const received = (gw: TestGateway, cause: string) =>
    metric(gw, new RegExp(`^portico_cache_broadcast_received_total\\{cause="${cause}"\\} (\\d+)`, 'm'));
  const sent = (gw: TestGateway, cause: string) =>
    metric(gw, new RegExp(`^portico_cache_broadcast_sent_total\\{cause="${cause}"\\} (\\d+)`, 'm'));
  /** Resolves once `gw` has applied more than `before` messages of `cause` from the other replica. */
  const receivedMore = (gw: TestGateway, cause: string, before: number) =>
    waitFor(async () => (await received(gw, cause)) > before, 5_000, `${cause} received`);

  /** Puts `path` in both gateways' memory: a miss on one, then a shared hit on two, then a memory hit on both. */
  async function fillBoth(path: string): Promise<void> {
    assert.match(String((await get(one, path)).headers['cache-status']), /fwd=uri-miss/);
    await waitFor(async () => (await inspect.exists(`${KEY_PREFIX}hc:${HOST}\u0000${path}`)) === 1, 5_000, path);
    assert.equal((await get(two, path)).headers['cache-status'], 'Portico; hit; detail=shared');
    for (const gw of [one, two]) assert.equal((await get(gw, path)).headers['cache-status'], 'Portico; hit');
  }

  async function purge(body: unknown): Promise<void> {
    const reply = await adminRequest(one.gateway.adminAddress()!.port, '/api/cache/purge', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(reply.status, 200, reply.text);
  }

  it("a purge by URL, by prefix and by route on one admin listener empties the other replica's memory", async () => {
    for (const [path, target] of [
      ['/api/items/u1', { url: `http://${HOST}/api/items/u1` }],
      ['/api/items/pre-1', { prefix: '/api/items/pre-' }],
      ['/api/other/r1', { route: 'GET /other/{id}' }],
    ] as const) {
      await fillBoth(path);
      const before = await received(two, 'purge');
      await purge(target);
      await receivedMore(two, 'purge', before);
      const after = await get(two, path);
      assert.equal(after.status, 200);
      assert.match(String(after.headers['cache-status']), /fwd=uri-miss/, `${path} after ${JSON.stringify(target)}`);
    }
    assert.ok((await sent(one, 'purge')) >= 3);
    assert.equal(await received(one, 'purge'), 0, 'a replica ignores its own messages');
    // The status document shows the same counts.
    const status = async (gw: TestGateway) =>
      ((await adminRequest(gw.gateway.adminAddress()!.port, '/api/status')).json() as StatusDocument).httpCache
        .broadcast;
    const [ofOne, ofTwo] = [await status(one), await status(two)];
    assert.equal(ofOne?.subscribed, true);
    assert.ok(ofOne!.sent >= 3 && ofOne!.received === 0, JSON.stringify(ofOne));
    assert.ok(ofTwo!.received >= 3 && ofTwo!.sent === 0, JSON.stringify(ofTwo));
  });

  it("leaves what a purge does not name in the other replica's memory", async () => {
    await fillBoth('/api/items/kept');
    await fillBoth('/api/items/gone');
    const before = await received(two, 'purge');
    await purge({ url: '/api/items/gone' });
    await receivedMore(two, 'purge', before);
    assert.equal((await get(two, '/api/items/kept')).headers['cache-status'], 'Portico; hit');
    assert.match(String((await get(two, '/api/items/gone')).headers['cache-status']), /fwd=uri-miss/);
  });

  for (const method of ['POST', 'PUT', 'DELETE'])
    it(`an unsafe ${method} through one replica empties the other's memory (HTTP/1.1)`, async () => {
      const path = `/api/items/${method.toLowerCase()}`;
      await fillBoth(path);
      const before = await received(two, 'invalidation');
      const res = await request(`${one.url}${path}`, { method, headers: { host: HOST } });
      await res.body.dump();
      assert.equal(res.statusCode, 204);
      await receivedMore(two, 'invalidation', before);
      assert.match(String((await get(two, path)).headers['cache-status']), /fwd=uri-miss/);
      assert.equal(count(path.slice(4)), 3, 'the GET, the unsafe request, the GET after it');
    });

  it("an unsafe request over HTTP/2 empties the other replica's memory, read over HTTP/2", async () => {
    const path = '/api/items/h2';
    await fillBoth(path);
    const before = await received(two, 'invalidation');
    const toOne = connect(one.url);
    const toTwo = connect(two.url);
    try {
      const answer = await h2request(toOne, path, { ':method': 'DELETE', ':authority': HOST });
      assert.equal(answer.status, 204);
      await receivedMore(two, 'invalidation', before);
      const after = await h2request(toTwo, path, { ':authority': HOST });
      assert.equal(after.status, 200);
      assert.match(String(after.headers['cache-status']), /fwd=uri-miss/);
    } finally {
      toOne.close();
      toTwo.close();
    }
  });

  it('ignores and counts malformed messages on the channel; the memory stays', async () => {
    await fillBoth('/api/items/m1');
    const malformed = () => metric(two, /^portico_cache_broadcast_malformed_total (\d+)/m);
    const before = await malformed();
    await inspect.publish(CHANNEL, 'not a message');
    await inspect.publish(CHANNEL, JSON.stringify({ v: 1, from: 'x', cause: 'purge', targets: [{ kind: 'all' }] }));
    await inspect.publish(CHANNEL, Buffer.alloc(70_000, 0x7b));
    await waitFor(async () => (await malformed()) >= before + 3, 5_000, 'malformed counted');
    assert.equal((await get(two, '/api/items/m1')).headers['cache-status'], 'Portico; hit');
  });

  it('a Redis killed and started again: each replica drops its memory once subscribed again, counted', async () => {
    await fillBoth('/api/items/outage');
    const resets = () => metric(two, /^portico_cache_broadcast_resets_total\{reason="resubscribed"\} (\d+)/m);
    const before = await resets();
    inspect.disconnect();
    await redis.stop();
    await waitFor(async () => (await subscribed(two)) === 0, 10_000, 'subscription lost');
    // Memory serves while Redis is down: no request fails because of Redis.
    assert.equal((await get(two, '/api/items/outage')).headers['cache-status'], 'Portico; hit');
    await redis.start();
    await waitFor(async () => (await resets()) > before, 15_000, 'memory dropped after the outage');
    assert.equal(await subscribed(two), 1);
    assert.match(String((await get(two, '/api/items/outage')).headers['cache-status']), /fwd=uri-miss/);
    inspect = new Redis(redis.url, { lazyConnect: true, retryStrategy: () => null });
    await inspect.connect();
  });
});
