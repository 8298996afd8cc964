/**
 * Requests carrying `Upgrade` that the gateway does not upgrade (h2c from Java's HttpClient and
 * `curl --http2`, a WebSocket handshake for a standard route) are served over HTTP/1.1 by the
 * normal request handler, the `Upgrade` ignored, as nginx and Envoy do.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { rawConnect, withRawConnection } from '../support/raw-http.js';
import { openWebSocket, startWsBackend, type WsBackend } from '../support/ws-backend.js';
import { closeAll } from '../support/close-all.js';
import { assertErrorHead } from '../support/error-answer.js';

const H2C = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n';
const WS_HANDSHAKE =
  'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

describe('upgrades the gateway does not perform are served as plain HTTP/1.1 requests', () => {
  let backend: TestBackend;
  let wsBackend: WsBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((req, res, body) =>
      json(res, 200, { method: req.method, url: req.url, body: body.toString('utf8') }),
    );
    wsBackend = await startWsBackend();
    gw = await startGateway(`
routes:
  - { method: GET, route: /items, service: ${backend.host}, path: /items }
  - { method: POST, route: /items, service: ${backend.host}, path: /items }
  - { method: GET, route: /echo, service: ${wsBackend.host}, path: /echo, isWebSocket: true }
`);
  });
  after(() => closeAll(gw, backend, wsBackend));

  it('answers a GET with Upgrade: h2c (curl --http2) over HTTP/1.1, keeps the connection, forwards no upgrade header', async () => {
    const before = backend.seen.length;
    const conn = await rawConnect(gw.port);
    try {
      conn.write(`GET /api/items?q=1 HTTP/1.1\r\nHost: gw.test\r\nX-Request-ID: h2c-get\r\n${H2C}\r\n`);
      const res = await conn.next();
      assert.equal(res.status, 200);
      assert.equal(res.headers['x-request-id'], 'h2c-get');
      assert.equal(res.headers.upgrade, undefined);
      assert.deepEqual(JSON.parse(res.body), { method: 'GET', url: '/items?q=1', body: '' });
      assert.equal(backend.seen.length, before + 1);
      const seen = backend.seen.at(-1)!;
      assert.equal(seen.headers.upgrade, undefined);
      assert.equal(seen.headers['http2-settings'], undefined);
      assert.equal(seen.headers.connection, 'keep-alive', "undici's own connection header, not the client's");
      assert.equal(seen.headers['x-request-id'], 'h2c-get');
      // The same connection serves the next request (keep-alive).
      conn.write('GET /api/items?q=2 HTTP/1.1\r\nHost: gw.test\r\n\r\n');
      const second = await conn.next();
      assert.equal(second.status, 200);
      assert.deepEqual(JSON.parse(second.body), { method: 'GET', url: '/items?q=2', body: '' });
      assert.equal(backend.seen.length, before + 2);
    } finally {
      conn.close();
    }
  });

  it('forwards the body of a POST with Upgrade: h2c (Java HttpClient), sent in two parts', async () => {
    const conn = await rawConnect(gw.port);
    try {
      conn.write(
        `POST /api/items HTTP/1.1\r\nHost: gw.test\r\nContent-Type: application/json\r\nContent-Length: 15\r\n${H2C}\r\n{"name":`,
      );
      // A gap so the rest of the body comes in its own packet: nothing to await.
      await new Promise((r) => setTimeout(r, 50));
      conn.write('"lamp"}');
      const res = await conn.next();
      assert.equal(res.status, 200);
      assert.equal(typeof res.headers['x-request-id'], 'string');
      assert.deepEqual(JSON.parse(res.body), { method: 'POST', url: '/items', body: '{"name":"lamp"}' });
    } finally {
      conn.close();
    }
  });

  it('forwards a chunked body with Upgrade: h2c and serves a request pipelined behind it', async () => {
    const conn = await rawConnect(gw.port);
    try {
      conn.write(
        `POST /api/items HTTP/1.1\r\nHost: gw.test\r\nTransfer-Encoding: chunked\r\n${H2C}\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\nGET /api/items?after=1 HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\n\r\n`,
      );
      const first = await conn.next();
      assert.equal(first.status, 200);
      assert.deepEqual(JSON.parse(first.body), { method: 'POST', url: '/items', body: 'abcde' });
      const second = await conn.next();
      assert.equal(second.status, 200);
      assert.equal(second.headers.connection, 'close');
      assert.deepEqual(JSON.parse(second.body), { method: 'GET', url: '/items?after=1', body: '' });
      await conn.closed;
    } finally {
      conn.close();
    }
  });

  it('serves a WebSocket handshake for a standard route as a plain GET (no 101), without forwarding Upgrade', async () => {
    const before = backend.seen.length;
    const conn = await rawConnect(gw.port);
    try {
      conn.write(`GET /api/items HTTP/1.1\r\nHost: gw.test\r\n${WS_HANDSHAKE}\r\n`);
      const res = await conn.next();
      assert.equal(res.status, 200);
      assert.deepEqual(JSON.parse(res.body), { method: 'GET', url: '/items', body: '' });
      assert.equal(backend.seen.length, before + 1);
      assert.equal(backend.seen.at(-1)!.headers.upgrade, undefined);
      assert.equal(wsBackend.upgrades.length, 0);
    } finally {
      conn.close();
    }
  });

  const plainAnswers = [
    {
      name: 'a WebSocket handshake for an unknown path: 404 JSON',
      request: `GET /api/nowhere HTTP/1.1\r\nHost: gw.test\r\n${WS_HANDSHAKE}\r\n`,
      status: 404,
      code: 'GW_ROUTE_NOT_FOUND',
    },
    {
      name: 'a WebSocket handshake with a method the path lacks: 405 JSON with Allow',
      request: `DELETE /api/items HTTP/1.1\r\nHost: gw.test\r\n${WS_HANDSHAKE}\r\n`,
      status: 405,
      code: 'GW_METHOD_NOT_ALLOWED',
      allow: 'GET, POST, HEAD',
    },
    {
      name: 'Upgrade: h2c on a WebSocket route: 426 JSON',
      request: `GET /api/echo HTTP/1.1\r\nHost: gw.test\r\n${H2C}\r\n`,
      status: 426,
      code: 'GW_UPGRADE_REQUIRED',
    },
  ];
  for (const c of plainAnswers) {
    it(`answers ${c.name}, the route's ordinary answer, with a request id`, async () => {
      const before = backend.seen.length;
      await withRawConnection(gw.port, async (conn) => {
        conn.write(c.request);
        const res = await conn.next();
        assertErrorHead(res, c.status, c.code);
        assert.equal(res.headers.allow, c.allow);
        assert.equal(typeof res.headers['x-request-id'], 'string');
        assert.equal(JSON.parse(res.body).success, false);
        assert.equal(backend.seen.length, before);
        assert.equal(wsBackend.upgrades.length, 0);
      });
    });
  }

  it('still upgrades a WebSocket handshake for a WebSocket route', async () => {
    const { ws } = await openWebSocket(`${gw.url.replace('http:', 'ws:')}/api/echo`);
    const message = new Promise<string>((r) => ws.once('message', (d: Buffer) => r(d.toString('utf8'))));
    ws.send('hi');
    assert.equal(await message, 'hi');
    ws.close();
    assert.equal(wsBackend.upgrades.length, 1);
  });
});
