/**
 * WebSocket upgrades pass the route's guards like HTTP requests: the rate limit (the same
 * process-wide buckets, 429 JSON with Retry-After and RateLimit-* on the socket) and, with
 * `config.cors` set, the Origin check (403 JSON for a browser page of a foreign origin).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rawRequest, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { rawConnect } from '../support/raw-http.js';
import {
  bounded,
  handshakeHeaders,
  startWsBackend,
  upgradeRequest,
  type UpgradeAnswer,
  type WsBackend,
} from '../support/ws-backend.js';
import { gatewayForSuite } from '../support/suite-gateway.js';
import { closeAll } from '../support/close-all.js';

/** Closes an upgraded socket at once (the tests only look at the 101). */
function done(answer: UpgradeAnswer): void {
  if (answer.kind === 'upgrade') answer.socket.destroy();
}

describe('WebSocket upgrades are rate limited with the HTTP buckets', () => {
  let wsBackend: WsBackend;
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    wsBackend = await startWsBackend();
    backend = await startBackend();
    gw = await startGateway(`
routes:
  - { method: GET, route: /echo, service: ${wsBackend.host}, path: /echo, isWebSocket: true }
  - { method: GET, route: /own, service: ${wsBackend.host}, path: /echo, isWebSocket: true,
      rateLimit: { requestsPerSec: 0.1, burst: 1 } }
  - { method: GET, route: /free, service: ${wsBackend.host}, path: /echo, isWebSocket: true,
      rateLimit: { enabled: false } }
  - { method: GET, route: /plain, service: ${backend.host}, path: /plain }
config:
  rateLimit:
    enabled: true
    requestsPerSec: 0.2
    burst: 2
`);
  });
  after(() => closeAll(gw, wsBackend, backend));

  it('takes upgrades from the shared bucket and answers 429 JSON with Retry-After and RateLimit-* without contacting the backend', async () => {
    const plain = await rawRequest(gw.url, '/api/plain');
    assert.equal(plain.status, 200);
    const first = await upgradeRequest(gw.url, '/api/echo', handshakeHeaders());
    assert.equal(first.status, 101);
    done(first);
    assert.equal(wsBackend.upgrades.length, 1);

    const refused = await upgradeRequest(gw.url, '/api/echo', handshakeHeaders({ 'x-request-id': 'ws-limited' }));
    assert.equal(refused.kind, 'response');
    if (refused.kind !== 'response') return;
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['content-type'], 'application/json');
    assert.equal(refused.headers['x-portico-error'], 'GW_RATE_LIMITED');
    assert.equal(refused.headers['x-request-id'], 'ws-limited');
    assert.equal(refused.headers.connection, 'close');
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 5, `retry-after ${retryAfter}`);
    assert.equal(refused.headers['ratelimit-limit'], '2');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    assert.ok(Number(refused.headers['ratelimit-reset']) >= 5 && Number(refused.headers['ratelimit-reset']) <= 10);
    assert.deepEqual(JSON.parse(refused.body), { error: 'Too many requests', success: false });
    await bounded(refused.closed, 3_000, 'connection close');
    assert.equal(wsBackend.upgrades.length, 1, 'the backend was not contacted');

    // The same bucket refuses the next HTTP request too.
    const after = await rawRequest(gw.url, '/api/plain');
    assert.equal(after.status, 429);
    assert.equal(backend.seen.length, 1);
    const line = gw.logs.find((l) => l.reqId === 'ws-limited' && l.msg === 'request');
    assert.equal(line?.status, 429);
  });

  it("keeps a route's own bucket apart and exempts a route with rateLimit.enabled: false", async () => {
    const before = wsBackend.upgrades.length;
    const own = await upgradeRequest(gw.url, '/api/own', handshakeHeaders());
    assert.equal(own.status, 101);
    done(own);
    const ownAgain = await upgradeRequest(gw.url, '/api/own', handshakeHeaders());
    assert.equal(ownAgain.status, 429);
    assert.equal(ownAgain.kind === 'response' && ownAgain.headers['ratelimit-limit'], '1');
    for (let i = 0; i < 3; i++) {
      const free = await upgradeRequest(gw.url, '/api/free', handshakeHeaders());
      assert.equal(free.status, 101);
      done(free);
    }
    assert.equal(wsBackend.upgrades.length, before + 4);
  });
});

describe('WebSocket upgrades honour the CORS origins', () => {
  const s = gatewayForSuite(
    (backend) => `
routes:
  - { method: GET, route: /echo, service: ${backend.host}, path: /echo, isWebSocket: true }
config:
  cors:
    origins: ["https://app.example.com", "https://*.partner.example"]
`,
    () => startWsBackend(),
  );

  it('refuses a browser handshake from a foreign origin with 403 JSON, without contacting the backend', async () => {
    const res = await upgradeRequest(
      s.gw.url,
      '/api/echo',
      handshakeHeaders({ origin: 'https://evil.example', 'x-request-id': 'ws-foreign' }),
    );
    assert.equal(res.kind, 'response');
    if (res.kind !== 'response') return;
    assert.equal(res.status, 403);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['x-portico-error'], 'GW_ORIGIN_NOT_ALLOWED');
    assert.equal(res.headers['x-request-id'], 'ws-foreign');
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.deepEqual(JSON.parse(res.body), { error: 'Origin not allowed', success: false });
    await bounded(res.closed, 3_000, 'connection close');
    assert.equal(s.backend.upgrades.length, 0);
  });

  const admitted = [
    { name: 'an allowed origin', origin: 'https://app.example.com' },
    { name: 'an origin matching a wildcard entry', origin: 'https://eu.partner.example' },
    { name: "the gateway's own origin (same-origin page)", origin: 'self' },
    { name: 'no Origin (not a browser)', origin: undefined },
  ];
  for (const c of admitted) {
    it(`upgrades a handshake with ${c.name}`, async () => {
      const before = s.backend.upgrades.length;
      const origin = c.origin === 'self' ? `http://127.0.0.1:${s.gw.port}` : c.origin;
      const res = await upgradeRequest(s.gw.url, '/api/echo', handshakeHeaders(origin === undefined ? {} : { origin }));
      assert.equal(res.status, 101);
      done(res);
      assert.equal(s.backend.upgrades.length, before + 1);
      assert.equal(s.backend.upgrades.at(-1)!.headers.origin, origin);
    });
  }
});

describe('WebSocket handshakes pass the protocol checks of every request', () => {
  const s = gatewayForSuite(
    (backend) => `
routes:
  - { method: GET, route: /echo, service: ${backend.host}, path: /echo, isWebSocket: true }
`,
    () => startWsBackend(),
  );

  const refused = [
    { name: 'a second Host', hosts: ['Host: evil.example/reset?x=@y', 'Host: gw'], code: 'GW_BAD_HOST' },
    { name: 'an invalid Host', hosts: ['Host: evil.example/reset?x=@y'], code: 'GW_BAD_HOST' },
    { name: 'no Host', hosts: [], code: 'GW_BAD_HOST' },
  ];
  for (const c of refused) {
    it(`refuses a handshake with ${c.name}: 400 ${c.code}, the backend never contacted`, async () => {
      const conn = await rawConnect(s.gw.port);
      const head = [
        'GET /api/echo HTTP/1.1',
        ...c.hosts,
        ...Object.entries(handshakeHeaders({ 'x-request-id': 'ws-host' })).map(([n, v]) => `${n}: ${v}`),
      ];
      conn.write(`${head.join('\r\n')}\r\n\r\n`);
      const res = await conn.next();
      assert.equal(res.status, 400);
      assert.equal(res.headers['x-portico-error'], c.code);
      assert.equal(res.headers['x-request-id'], 'ws-host');
      assert.equal(res.headers['connection'], 'close');
      await bounded(conn.closed, 3_000, 'connection close');
      assert.equal(s.backend.upgrades.length, 0);
    });
  }

  it('logs and counts a handshake like any request, with the request id of its answer', async () => {
    const ends: { status: number; routeId: string | undefined; requestId: string }[] = [];
    s.gw.gateway.events.on('request:end', (e) => ends.push(e));
    const res = await upgradeRequest(s.gw.url, '/api/echo', handshakeHeaders({ 'x-request-id': 'ws-ok' }));
    assert.equal(res.status, 101);
    assert.equal(res.headers['x-request-id'], 'ws-ok');
    done(res);
    assert.deepEqual(
      ends.filter((e) => e.requestId === 'ws-ok').map((e) => [e.status, e.routeId]),
      [[101, 'GET /echo']],
    );
  });
});
