/**
 * IP allow and deny lists (docs/security.md "IP allow and deny lists") through the real gateway:
 * the socket's peer and, from a trusted proxy, X-Forwarded-For; HTTP/1.1, h2c, CORS preflights
 * and WebSocket handshakes, each refused with 403 before any other work. Clients take loopback
 * addresses of their own (127.0.0.2) to be another peer than the trusted proxy (127.0.0.1).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect as h2connect } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { handshakeHeaders, openWebSocket, startWsBackend, type WsBackend } from '../support/ws-backend.js';
import { h2request } from '../support/http2.js';
import { waitFor } from '../support/wait-for.js';

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One request on a connection of its own from `from` (a loopback address); a 101 resolves with status 101. */
function send(
  port: number,
  path: string,
  options: { from?: string; method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path,
      method: options.method ?? 'GET',
      headers: options.headers,
      localAddress: options.from ?? '127.0.0.1',
      agent: false,
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '' });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

function assertRefused(a: Answer): void {
  assert.equal(a.status, 403);
  assert.equal(a.headers['x-portico-error'], 'GW_IP_FORBIDDEN');
  assert.deepEqual(JSON.parse(a.body), { error: 'Client address not allowed', success: false });
}

describe('ipRules', () => {
  let backend: TestBackend;
  let ws: WsBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend();
    ws = await startWsBackend();
    gw = await startGateway(`
config:
  trustProxy: [127.0.0.1]
  ipRules:
    deny: [203.0.113.0/24, "2001:db8:bad::/48"]
  cors: { origins: [https://app.example.com] }
  rateLimit: { enabled: true, requestsPerSec: 1000 }
  http2: { cleartext: true }
routes:
  - { method: GET, route: /orders, service: ${backend.host}, path: /orders }
  - { method: POST, route: /orders, service: ${backend.host}, path: /orders }
  - method: GET
    route: /admin/stats
    service: ${backend.host}
    path: /stats
    ipRules:
      allow: [192.0.2.0/24, "2001:db8:ca11::/48"]
  - { method: GET, route: /feed, service: ${ws.host}, path: /feed, isWebSocket: true }
  - { method: GET, route: /open, service: ${backend.host}, path: /open, ipRules: {} }
`);
  });
  after(() => closeAll(gw, backend, ws));

  const viaProxy = (client: string, extra: Record<string, string> = {}) => ({
    headers: { 'x-forwarded-for': client, ...extra },
  });

  it('lets in a client outside the deny list, with the layers after it (CORS, rate limit) at work', async () => {
    const a = await send(gw.port, '/api/orders', { headers: { origin: 'https://app.example.com' } });
    assert.equal(a.status, 200);
    assert.equal(a.headers['access-control-allow-origin'], 'https://app.example.com');
    assert.ok(a.headers['ratelimit-limit'] !== undefined);
    assert.equal((await send(gw.port, '/api/orders', { from: '127.0.0.2' })).status, 200);
  });

  it('refuses a denied client behind the trusted proxy before CORS, the rate limit and the backend', async () => {
    const seen = backend.seen.length;
    for (const client of ['203.0.113.9', '2001:db8:bad::1', '::ffff:203.0.113.200', '198.51.100.1, 203.0.113.1']) {
      const a = await send(gw.port, '/api/orders', viaProxy(client, { origin: 'https://app.example.com' }));
      assertRefused(a);
      assert.equal(a.headers['access-control-allow-origin'], undefined, client);
      assert.equal(a.headers['ratelimit-limit'], undefined, client);
    }
    assert.equal(backend.seen.length, seen);
    // The client the proxy saw is tested, not a hop the client wrote on the left.
    assert.equal((await send(gw.port, '/api/orders', viaProxy('203.0.113.1, 198.51.100.1'))).status, 200);
  });

  it('believes X-Forwarded-For only from the trusted proxy', async () => {
    // 127.0.0.2 is not trusted: its own address is tested, whatever it forwards.
    assert.equal((await send(gw.port, '/api/orders', { from: '127.0.0.2', ...viaProxy('203.0.113.9') })).status, 200);
    assertRefused(await send(gw.port, '/api/admin/stats', { from: '127.0.0.2', ...viaProxy('192.0.2.7') }));
  });

  it("applies a route's own rules instead of the global ones", async () => {
    assert.equal((await send(gw.port, '/api/admin/stats', viaProxy('192.0.2.7'))).status, 200);
    assert.equal((await send(gw.port, '/api/admin/stats', viaProxy('2001:db8:ca11:5::1'))).status, 200);
    // Outside the allow list: the socket peer itself, another network, an IPv6 client elsewhere.
    assertRefused(await send(gw.port, '/api/admin/stats'));
    assertRefused(await send(gw.port, '/api/admin/stats', viaProxy('198.51.100.1')));
    assertRefused(await send(gw.port, '/api/admin/stats', viaProxy('2001:db8:ca12::1')));
    // The route's rules replace the global ones: an empty section refuses nobody.
    assert.equal((await send(gw.port, '/api/open', viaProxy('203.0.113.9'))).status, 200);
  });

  it('refuses an upload without reading its body', async () => {
    const seen = backend.seen.length;
    const a = await send(gw.port, '/api/orders', {
      method: 'POST',
      ...viaProxy('203.0.113.9', { 'content-type': 'application/json' }),
      body: '{"item":1}',
    });
    assertRefused(a);
    assert.equal(backend.seen.length, seen);
    const ok = await send(gw.port, '/api/orders', { method: 'POST', body: '{"item":1}' });
    assert.equal(ok.status, 200);
    assert.equal(backend.seen.at(-1)!.body.toString(), '{"item":1}');
  });

  it('refuses a CORS preflight from a denied client without the CORS policy', async () => {
    const preflight = (client: string) =>
      send(gw.port, '/api/orders', {
        method: 'OPTIONS',
        ...viaProxy(client, { origin: 'https://app.example.com', 'access-control-request-method': 'POST' }),
      });
    const refused = await preflight('203.0.113.9');
    assertRefused(refused);
    assert.equal(refused.headers['access-control-allow-origin'], undefined);
    const allowed = await preflight('198.51.100.1');
    assert.equal(allowed.status, 204);
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://app.example.com');
  });

  it('refuses a WebSocket handshake from a denied client before the backend sees it', async () => {
    const upgrades = ws.upgrades.length;
    const headers = handshakeHeaders({ origin: 'https://app.example.com' });
    assertRefused(await send(gw.port, '/api/feed', viaProxy('203.0.113.9', headers)));
    assertRefused(await send(gw.port, '/api/feed', viaProxy('2001:db8:bad:1::2', headers)));
    assert.equal(ws.upgrades.length, upgrades);
    const { ws: client } = await openWebSocket(`ws://127.0.0.1:${gw.port}/api/feed`, undefined, {
      headers: { origin: 'https://app.example.com', 'x-forwarded-for': '198.51.100.1' },
    });
    client.close();
    assert.equal(ws.upgrades.length, upgrades + 1);
  });

  it('refuses over HTTP/2 (h2c) from the socket peer and from a forwarded client', async () => {
    const session = h2connect(`http://127.0.0.1:${gw.port}`);
    const other = h2connect(`http://127.0.0.1:${gw.port}`, {
      createConnection: () => netConnect({ host: '127.0.0.1', port: gw.port, localAddress: '127.0.0.2' }),
    });
    try {
      const refused = await h2request(session, '/api/orders', { 'x-forwarded-for': '2001:db8:bad::7' });
      assert.equal(refused.status, 403);
      assert.equal(refused.headers['x-portico-error'], 'GW_IP_FORBIDDEN');
      assert.equal((await h2request(session, '/api/admin/stats', { 'x-forwarded-for': '192.0.2.1' })).status, 200);
      const peer = await h2request(other, '/api/admin/stats', { 'x-forwarded-for': '192.0.2.1' });
      assert.equal(peer.status, 403);
      assert.equal(peer.headers['x-portico-error'], 'GW_IP_FORBIDDEN');
      assert.equal((await h2request(other, '/api/orders')).status, 200);
    } finally {
      session.close();
      other.close();
    }
  });

  it('logs a refusal under its route with the error code', async () => {
    const a = await send(gw.port, '/api/orders', viaProxy('203.0.113.77'));
    const id = a.headers['x-request-id'];
    const lineOf = () => gw.logs.find((l) => l.reqId === id || l.requestId === id);
    await waitFor(() => lineOf() !== undefined, 3_000, `a log line for ${String(id)}`);
    const line = lineOf()!;
    assert.equal(line.error, 'GW_IP_FORBIDDEN');
    assert.equal(line.status, 403);
    assert.equal(line.route, 'GET /orders');
  });
});
