/**
 * Purging the HTTP cache on the admin listener and its panel in the status document (docs/caching.md
 * "Purge", docs/dashboard.md), on one gateway without Redis: by URL (absolute or a path), by path
 * prefix, by route; the token, the JSON-only rule and bad requests; the counts of the panel.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { adminRequest } from '../support/admin.js';
import { h2request } from '../support/http2.js';
import { closeAll } from '../support/close-all.js';
import type { StatusDocument } from '../../src/admin/types.js';

const TOKEN = 'a-token-for-the-cache-purge-tests';

describe('cache purge and panel on the admin listener', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let admin: number;
  const calls = new Map<string, number>();

  before(async () => {
    backend = await startBackend((req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      calls.set(path, (calls.get(path) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
      res.end(JSON.stringify({ path, n: calls.get(path) }));
    });
    gw = await startGateway(`
config:
  http2: { cleartext: true }
  admin: { port: 0, token: ${TOKEN} }
routes:
  - { method: GET, route: "/docs/{id}", service: ${backend.host}, path: "/docs/{id}", cache: true }
  - { method: GET, route: "/news/{id}", service: ${backend.host}, path: "/news/{id}", cache: true }
`);
    admin = gw.gateway.adminAddress()!.port;
  });
  after(() => closeAll(gw, backend));

  const purge = (body: string, headers: Record<string, string> = {}) =>
    adminRequest(admin, '/api/cache/purge', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
      body,
    });
  const status = async (path: string) => String((await gw.get(path)).headers['cache-status']);

  it('purges one URL (a path, or absolute with its host), a prefix, a route, and counts what went', async () => {
    for (const path of ['/api/docs/a', '/api/docs/b', '/api/docs/b?x=1', '/api/news/1', '/api/news/2'])
      assert.match(await status(path), /fwd=uri-miss/);
    assert.equal(await status('/api/docs/a'), 'Portico; hit');

    let reply = await purge(JSON.stringify({ url: '/api/docs/a' }));
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['cache-control'], 'no-store');
    assert.deepEqual(reply.json(), { purged: { memory: 1 } });
    assert.match(await status('/api/docs/a'), /fwd=uri-miss/, 'fetched again after the purge');

    const host = `127.0.0.1:${gw.port}`;
    reply = await purge(JSON.stringify({ url: `http://${host}/api/docs/a` }));
    assert.deepEqual(reply.json(), { purged: { memory: 1 } });
    reply = await purge(JSON.stringify({ url: 'http://elsewhere.example/api/docs/b' }));
    assert.deepEqual(reply.json(), { purged: { memory: 0 } }, 'another host keeps nothing of these');

    reply = await purge(JSON.stringify({ prefix: '/api/docs/b' }));
    assert.deepEqual(reply.json(), { purged: { memory: 2 } }, '/api/docs/b and /api/docs/b?x=1');
    assert.equal(await status('/api/news/1'), 'Portico; hit');

    reply = await purge(JSON.stringify({ route: 'GET /news/{id}', host }));
    assert.deepEqual(reply.json(), { purged: { memory: 2 } });
    assert.match(await status('/api/news/1'), /fwd=uri-miss/);
    assert.equal(calls.get('/news/1'), 2);
  });

  it('also purges what HTTP/2 requests stored (keyed by :authority)', async () => {
    const session = connect(gw.url);
    try {
      const first = await h2request(session, '/api/docs/h2');
      assert.match(String(first.headers['cache-status']), /fwd=uri-miss/);
      assert.equal((await h2request(session, '/api/docs/h2')).headers['cache-status'], 'Portico; hit');
      assert.deepEqual((await purge(JSON.stringify({ url: '/api/docs/h2' }))).json(), { purged: { memory: 1 } });
      assert.match(String((await h2request(session, '/api/docs/h2')).headers['cache-status']), /fwd=uri-miss/);
    } finally {
      session.close();
    }
  });

  it('refuses without the token, anything but JSON, and bodies that name no one target', async () => {
    const noToken = await adminRequest(admin, '/api/cache/purge', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"prefix":"/"}',
    });
    assert.equal(noToken.status, 401);
    assert.deepEqual(noToken.json(), { error: 'Admin token missing or invalid', success: false });

    // What a form on another site could post: refused, so it cannot empty the cache.
    const form = await purge('prefix=/', { 'content-type': 'application/x-www-form-urlencoded' });
    assert.equal(form.status, 415);

    for (const body of [
      'not json',
      '[]',
      '{}',
      '{"url":"/a","prefix":"/b"}',
      '{"prefix":"no-slash"}',
      '{"url":"ftp://host/x"}',
      '{"url":"/a","host":"h"}',
      '{"route":"GET /docs/{id}","extra":1}',
      '{"route":""}',
    ]) {
      const reply = await purge(body);
      assert.equal(reply.status, 400, body);
      assert.deepEqual(reply.json(), {
        error: 'A purge names one of url, prefix or route, as a JSON object',
        success: false,
      });
    }
    const get = await adminRequest(admin, '/api/cache/purge', { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.allow, 'POST');
  });

  it('shows hits, misses, the hit ratio, entries and bytes in the status document, as /metrics has them', async () => {
    await purge(JSON.stringify({ prefix: '/' }));
    const read = async () =>
      (
        (
          await adminRequest(admin, '/api/status', { headers: { authorization: `Bearer ${TOKEN}` } })
        ).json() as StatusDocument
      ).httpCache;
    const before = await read();
    assert.equal(before.enabled, true);
    assert.equal(before.shared, false);
    assert.equal(before.entries, 0);
    assert.equal(before.bytes, 0);
    await gw.get('/api/docs/panel');
    await gw.get('/api/docs/panel');
    await gw.get('/api/docs/panel');
    const now = await read();
    assert.equal(now.misses, before.misses + 1);
    assert.equal(now.hits, before.hits + 2);
    assert.equal(now.entries, 1);
    assert.ok(now.bytes > 0);
    assert.ok(now.hitRatio !== null && now.hitRatio > 0 && now.hitRatio < 1);
    const metrics = (await gw.get('/metrics')).text;
    assert.match(metrics, new RegExp(`^portico_cache_entries ${now.entries}$`, 'm'));
    assert.match(metrics, new RegExp(`^portico_cache_bytes ${now.bytes}$`, 'm'));
  });
});
