/**
 * Prefix routes end to end over HTTP/1.1 and HTTP/2 (docs/routing.md "Prefix routes"): the rest
 * of the client path goes where the backend path has its `*`, the query as sent, parameters
 * before the `*`, segment boundaries (`/static` and `/staticx` are not under `/static/*`), the
 * precedence exact, parameter, longest prefix, 405 with the prefix routes' methods (an empty
 * parameter too); and a WebSocket prefix route limited to a host.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session } from 'node:http2';
import { json, rawRequest, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { h2request } from '../support/http2.js';
import { docExample } from '../support/doc-example.js';
import {
  bounded,
  handshakeHeaders,
  openWebSocket,
  startWsBackend,
  upgradeRequest,
  type WsBackend,
} from '../support/ws-backend.js';
import { once } from 'node:events';

describe('prefix routes', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let h2: ClientHttp2Session;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { method: req.method, url: req.url }));
    // The example of docs/routing.md "Prefix routes", as written there.
    gw = await startGateway(docExample('routing.md', '## Prefix routes', backend.host));
    h2 = connect(gw.url);
  });
  after(async () => {
    h2.close();
    await closeAll(gw, backend);
  });

  const cases = [
    { path: '/api/static/css2/a.css', backendSaw: '/assets/css2/a.css' },
    { path: '/api/static/img/logo.png?w=64&h=64', backendSaw: '/assets/img/logo.png?w=64&h=64' },
    { path: '/api/static/', backendSaw: '/assets/' },
    { path: '/api/static/docs/', backendSaw: '/assets/docs/' },
    { path: '/api/static/css/site.css?x=1', backendSaw: '/styles/site.css?v=2&x=1' },
    { path: '/api/static/manifest.json', backendSaw: '/manifest' },
    { path: '/api/static/manifest.json/x', backendSaw: '/assets/manifest.json/x' },
    { path: '/api/static/a%20b/%C3%A9t%C3%A9;v=1', backendSaw: '/assets/a%20b/%C3%A9t%C3%A9%3Bv%3D1' },
    { path: '/api/static/a..b/...c/.well-known', backendSaw: '/assets/a..b/...c/.well-known' },
    { path: '/api/tenants/acme/files/2024/q1.pdf', backendSaw: '/store/acme/2024/q1.pdf' },
    { path: '/api/tenants/a%20b/files/x', backendSaw: '/store/a%20b/x' },
  ];
  for (const c of cases) {
    it(`HTTP/1.1 and HTTP/2: ${c.path} -> ${c.backendSaw}`, async () => {
      const h1 = await rawRequest(gw.url, c.path);
      assert.equal(h1.status, 200, h1.body);
      assert.equal((JSON.parse(h1.body) as { url: string }).url, c.backendSaw);
      const two = await h2request(h2, c.path);
      assert.equal(two.status, 200, two.body);
      assert.equal((JSON.parse(two.body) as { url: string }).url, c.backendSaw);
    });
  }

  for (const path of ['/api/static', '/api/staticx', '/api/staticx/a.css', '/api/tenants/acme/files']) {
    it(`404 GW_ROUTE_NOT_FOUND outside the prefix's segments: ${path}`, async () => {
      const before = backend.seen.length;
      const h1 = await rawRequest(gw.url, path);
      assert.equal(h1.status, 404);
      assert.equal(h1.headers['x-portico-error'], 'GW_ROUTE_NOT_FOUND');
      const two = await h2request(h2, path);
      assert.equal(two.status, 404);
      assert.equal(backend.seen.length, before);
    });
  }

  it('405 with the methods of the prefix routes; PUT is forwarded with its method', async () => {
    const r = await rawRequest(gw.url, '/api/tenants/acme/files/a', { method: 'DELETE' });
    assert.equal(r.status, 405);
    assert.equal(r.headers.allow, 'GET, PUT, HEAD');
    const put = await rawRequest(gw.url, '/api/tenants/acme/files/a', { method: 'PUT' });
    assert.deepEqual(JSON.parse(put.body), { method: 'PUT', url: '/store/acme/a' });
  });
});

describe('an empty parameter', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let h2: ClientHttp2Session;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { method: req.method, url: req.url }));
    gw = await startGateway(`
config: { http2: { cleartext: true } }
routes:
  - { method: GET, route: "/users/{id}", service: ${backend.host}, path: "/u/{id}" }
  - { method: POST, route: "/users/*", service: ${backend.host}, path: "/upload/*" }
  - { method: GET, route: "/items/{id}", service: ${backend.host}, path: "/i/{id}" }
`);
    h2 = connect(gw.url);
  });
  after(async () => {
    h2.close();
    await closeAll(gw, backend);
  });

  it('matches nothing: 405 with the methods of the routes that take the path, else 404 (HTTP/1.1 and HTTP/2)', async () => {
    const before = backend.seen.length;
    const h1 = await rawRequest(gw.url, '/api/users/');
    assert.equal(h1.status, 405);
    assert.equal(h1.headers.allow, 'POST');
    const two = await h2request(h2, '/api/users/');
    assert.equal(two.status, 405);
    assert.equal(two.headers.allow, 'POST');
    const none = await rawRequest(gw.url, '/api/items/');
    assert.equal(none.status, 404);
    assert.equal(none.headers['x-portico-error'], 'GW_ROUTE_NOT_FOUND');
    assert.equal((await h2request(h2, '/api/items/')).status, 404);
    assert.equal(backend.seen.length, before);
    const post = await rawRequest(gw.url, '/api/users/', { method: 'POST' });
    assert.deepEqual(JSON.parse(post.body), { method: 'POST', url: '/upload/' });
  });
});

describe('a WebSocket prefix route limited to a host', () => {
  let backend: WsBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startWsBackend();
    gw = await startGateway(`
routes:
  - { method: GET, route: "/rooms/*", service: ${backend.host}, path: "/ws/*", isWebSocket: true, hosts: [chat.example.com] }
`);
  });
  after(() => closeAll(gw, backend));

  it('tunnels to the rest of the path on its host, and refuses an ambiguous rest before any upgrade', async () => {
    const { ws } = await openWebSocket(`ws://127.0.0.1:${gw.port}/api/rooms/general/42?since=7`, undefined, {
      headers: { host: 'chat.example.com' },
    });
    try {
      assert.equal(backend.upgrades.at(-1)?.url, '/ws/general/42?since=7');
      ws.send('hello');
      const [echo] = (await bounded(once(ws, 'message'), 5_000, 'echo')) as [Buffer];
      assert.equal(echo.toString(), 'hello');
    } finally {
      ws.close();
    }
    const seen = backend.upgrades.length;
    const bad = await upgradeRequest(gw.url, '/api/rooms/%2e%2e/admin', handshakeHeaders({ host: 'chat.example.com' }));
    assert.ok(bad.kind === 'response');
    assert.equal(bad.status, 400);
    assert.equal(bad.headers['x-portico-error'], 'GW_PATH_REST_INVALID');
    const elsewhere = await upgradeRequest(
      gw.url,
      '/api/rooms/general',
      handshakeHeaders({ host: 'other.example.com' }),
    );
    assert.ok(elsewhere.kind === 'response');
    assert.equal(elsewhere.status, 404);
    assert.equal(elsewhere.headers['x-portico-error'], 'GW_HOST_NOT_FOUND');
    assert.equal(backend.upgrades.length, seen);
  });
});
