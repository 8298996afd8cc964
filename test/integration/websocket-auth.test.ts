import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { closedPort, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { bounded, handshakeHeaders, openWebSocket, startWsBackend, upgradeRequest } from '../support/ws-backend.js';
import type { WsBackend } from '../support/ws-backend.js';
import { closeAll } from '../support/close-all.js';
import { assertErrorHead } from '../support/error-answer.js';

const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long';

function token(claims: Record<string, unknown>, secret = SECRET): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(secret));
}

describe('auth is checked before the upgrade (and on SSE routes like any route)', () => {
  let backend: WsBackend;
  let sseBackend: TestBackend;
  let gw: TestGateway;

  before(async () => {
    backend = await startWsBackend();
    sseBackend = await startBackend((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: hi\n\n');
    });
    gw = await startGateway(`
routes:
  - { method: GET, route: /private, service: ${backend.host}, path: /echo, isWebSocket: true }
  - { method: GET, route: /open, service: ${backend.host}, path: /echo, isWebSocket: true, public: true }
  - { method: GET, route: /events, service: ${sseBackend.host}, path: /events, isSSE: true }
config:
  auth:
    secret: ${SECRET}
    defaultProtected: true
`);
  });
  after(() => closeAll(gw, backend, sseBackend));

  const refusals = [
    { name: 'no token', headers: async (): Promise<Record<string, string>> => ({}), code: 'GW_AUTH_MISSING' },
    {
      name: 'a token signed with another secret',
      headers: async () => ({
        authorization: `Bearer ${await token({ sub: 'u1' }, 'another-secret-that-is-at-least-32-bytes')}`,
      }),
      code: 'GW_AUTH_INVALID',
    },
  ];
  for (const c of refusals) {
    it(`refuses the upgrade with 401 JSON and never connects to the backend: ${c.name}`, async () => {
      const headers = await c.headers();
      const connectionsBefore = backend.connections();
      const res = await upgradeRequest(gw.url, '/api/private', handshakeHeaders(headers));
      assert.equal(res.kind, 'response');
      if (res.kind !== 'response') return;
      assertErrorHead(res, 401, c.code);
      assert.equal(res.headers.connection, 'close');
      assert.equal(JSON.parse(res.body).success, false);
      await bounded(res.closed, 3_000, 'connection close');
      assert.equal(backend.connections(), connectionsBefore);
    });
  }

  it('upgrades with a valid token and sends the claims as X-<claim> headers', async () => {
    const jwt = await token({ sub: 'u1', role: 'admin' });
    const { ws } = await openWebSocket(`${gw.url.replace('http:', 'ws:')}/api/private`, undefined, {
      headers: { authorization: `Bearer ${jwt}`, 'x-role': 'forged' },
    });
    const seen = backend.upgrades.at(-1)!;
    assert.equal(seen.headers['x-sub'], 'u1');
    assert.equal(seen.headers['x-role'], 'admin');
    assert.equal(seen.headers.authorization, `Bearer ${jwt}`);
    ws.send('authorised');
    const echo = await bounded(new Promise<Buffer>((r) => ws.once('message', r)), 3_000, 'echo');
    assert.equal(echo.toString('utf8'), 'authorised');
    ws.close();
  });

  it('upgrades a public route without a token: the backend sees the upgrade, messages flow', async () => {
    const upgradesBefore = backend.upgrades.length;
    const { ws } = await openWebSocket(`${gw.url.replace('http:', 'ws:')}/api/open`);
    assert.equal(backend.upgrades.length, upgradesBefore + 1);
    const seen = backend.upgrades.at(-1)!;
    assert.equal(seen.url, '/echo');
    assert.equal(seen.headers.authorization, undefined);
    assert.equal(seen.headers['x-sub'], undefined, 'no claims without a token');
    ws.send('public');
    const echo = await bounded(new Promise<Buffer>((r) => ws.once('message', r)), 3_000, 'echo');
    assert.equal(echo.toString('utf8'), 'public');
    ws.close();
  });

  it('refuses an SSE stream without a token with 401 and never calls the backend', async () => {
    const before = sseBackend.seen.length;
    const res = await fetch(`${gw.url}/api/events`);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('x-portico-error'), 'GW_AUTH_MISSING');
    await res.arrayBuffer();
    assert.equal(sseBackend.seen.length, before);
  });
});

describe('the circuit breaker counts WebSocket upgrade attempts', () => {
  let gw: TestGateway;
  before(async () => {
    const down = await closedPort();
    gw = await startGateway(`
routes:
  - { method: GET, route: /down, service: 127.0.0.1:${down}, path: /echo, isWebSocket: true }
config:
  circuitBreaker:
    enabled: true
    maxFailures: 2
    timeoutSec: 30
`);
  });
  after(async () => {
    await gw?.close();
  });

  it('opens after maxFailures unreachable upgrades, then answers 503 JSON at once', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await upgradeRequest(gw.url, '/api/down', handshakeHeaders());
      assert.equal(res.status, 502);
    }
    const res = await upgradeRequest(gw.url, '/api/down', handshakeHeaders());
    assert.equal(res.kind, 'response');
    if (res.kind !== 'response') return;
    assert.equal(res.status, 503);
    assert.equal(res.headers['x-portico-error'], 'GW_CIRCUIT_OPEN');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.deepEqual(JSON.parse(res.body), { error: 'Service temporarily unavailable (circuit open)', success: false });
  });
});

describe('cross-site WebSocket hijacking: a cookie-authenticated handshake from another origin', () => {
  let backend: WsBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startWsBackend();
    gw = await startGateway(`
routes:
  - { method: GET, route: /chat, service: ${backend.host}, path: /echo, isWebSocket: true }
config:
  auth: { secret: ${SECRET}, defaultProtected: true, tokenFrom: [header, { cookie: session }] }
`);
  });
  after(() => closeAll(gw, backend));

  it('is refused 403 without CORS configured; the same origin and non-browser clients are served', async () => {
    const cookie = `session=${await token({ sub: 'victim' })}`;
    const foreign = await upgradeRequest(
      gw.url,
      '/api/chat',
      handshakeHeaders({ cookie, origin: 'https://evil.example' }),
    );
    assert.equal(foreign.kind, 'response');
    assert.equal(foreign.status, 403);
    if (foreign.kind === 'response') assert.equal(foreign.headers['x-portico-error'], 'GW_ORIGIN_NOT_ALLOWED');
    assert.equal(backend.upgrades.length, 0);
    for (const origin of [`http://127.0.0.1:${gw.port}`, undefined]) {
      const res = await upgradeRequest(
        gw.url,
        '/api/chat',
        handshakeHeaders(origin === undefined ? { cookie } : { cookie, origin }),
      );
      assert.equal(res.status, 101, String(origin));
      if (res.kind === 'upgrade') res.socket.destroy();
    }
    assert.equal(backend.upgrades.length, 2);
  });
});
