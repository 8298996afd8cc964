/**
 * Delegated mode (docs/design-decisions.md "Auth") with a real local auth service whose answer is chosen by the
 * token the client sends: 200 with claims, 200 empty, 200 {}, 401 JSON, 403 text, a redirect, a
 * cookie session, and no answer at all.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { json, startBackend, type SeenRequest, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import type { GatewayEvents } from '../../src/observability/events.js';
import { closeAll } from '../support/close-all.js';

function rawValues(seen: SeenRequest | undefined, name: string): string[] {
  const raw = seen?.rawHeaders ?? [];
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) out.push(raw[i + 1]!);
  return out;
}

describe('delegated auth service', () => {
  let backend: TestBackend;
  let auth: TestBackend;
  let gw: TestGateway;
  let authConnections = 0;
  const results: GatewayEvents['auth:result'][] = [];
  before(async () => {
    backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    auth = await startBackend((req, res) => {
      const authorization = req.headers.authorization;
      if (req.url !== '/v1/check') return json(res, 404, { error: 'wrong path', success: false });
      switch (authorization) {
        case 'Bearer claims':
          return json(res, 200, { userId: '42', username: 'ada', role: 'admin', level: 3, groups: ['a'] });
        case 'Bearer empty':
          res.writeHead(200, { 'content-length': '0' });
          return res.end();
        case 'Bearer braces':
          return json(res, 200, {});
        case 'Bearer expired':
          return json(
            res,
            401,
            { error: 'Token expired', success: false },
            { 'www-authenticate': 'Bearer error="invalid_token"' },
          );
        case 'Bearer forbidden':
          res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', 'content-length': '13' });
          return res.end('Access denied');
        case 'Bearer evil-claims':
          return json(res, 200, { userId: '7', role: 'a\r\nX-admin: yes', 'bad name': 'x', 'Request-ID': 'forged' });
        case 'Bearer hang':
          return; // never answers
        case undefined:
          // The service decides what a request without a token means: here, a session cookie.
          if (req.headers.cookie === 'sid=valid-session')
            return json(res, 200, { userId: '99', username: 'cookie-user' });
          res.writeHead(302, { location: 'https://login.example/?next=%2F', 'content-length': '0' });
          return res.end();
        default:
          return json(res, 401, { error: 'Unknown token', success: false });
      }
    });
    auth.server.on('connection', () => authConnections++);
    gw = await startGateway(`
routes:
  - { method: GET, route: /orders, service: ${backend.host}, path: /orders }
  - { method: GET, route: /catalog, service: ${backend.host}, path: /catalog, public: true }
config:
  auth:
    authService: ${auth.host}
    authPath: /v1/check
    defaultProtected: true
    secret: this-secret-is-ignored-in-delegated-mode-000000
`);
    gw.gateway.events.on('auth:result', (e) => results.push(e));
  });
  after(() => closeAll(gw, auth, backend));

  async function call(headers: Record<string, string>, path = '/api/orders') {
    const res = await request(`${gw.url}${path}`, { headers });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  it('200 with claims: every string claim becomes X-<claim>; the call carried the exact Authorization and the request id', async () => {
    const before = { auth: auth.seen.length, backend: backend.seen.length };
    const res = await call({ authorization: 'Bearer claims', 'x-request-id': 'deleg-1', 'x-role': 'spoofed' });
    assert.equal(res.status, 200);
    assert.equal(res.text, '{"ok":true}');
    assert.equal(auth.seen.length, before.auth + 1);
    const call1 = auth.seen.at(-1)!;
    assert.equal(call1.method, 'GET');
    assert.equal(call1.url, '/v1/check');
    assert.deepEqual(rawValues(call1, 'authorization'), ['Bearer claims']);
    assert.deepEqual(rawValues(call1, 'x-request-id'), ['deleg-1']);
    assert.deepEqual(rawValues(call1, 'x-forwarded-method'), ['GET']);
    assert.deepEqual(rawValues(call1, 'x-forwarded-uri'), ['/api/orders']);
    assert.deepEqual(rawValues(call1, 'x-role'), [], 'client identity headers are not sent to the auth service');
    assert.equal(backend.seen.length, before.backend + 1);
    const seen = backend.seen.at(-1);
    assert.deepEqual(rawValues(seen, 'x-userid'), ['42']);
    assert.deepEqual(rawValues(seen, 'x-username'), ['ada']);
    assert.deepEqual(rawValues(seen, 'x-role'), ['admin'], 'the claim, not the spoofed client value');
    assert.deepEqual(rawValues(seen, 'x-level'), []);
    assert.deepEqual(rawValues(seen, 'x-groups'), []);
    assert.deepEqual(rawValues(seen, 'authorization'), ['Bearer claims']);
    assert.deepEqual(rawValues(seen, 'x-request-id'), ['deleg-1']);
    assert.deepEqual(results.at(-1), { requestId: 'deleg-1', routeId: 'GET /orders', outcome: 'ok' });
  });

  it('the exact Authorization header is passed, odd spacing and case included', async () => {
    const res = await call({ authorization: 'bearer   Weird.Token ' });
    assert.equal(res.status, 401);
    // Node trims the trailing space of a header value on receipt; everything else is as sent.
    assert.deepEqual(rawValues(auth.seen.at(-1), 'authorization'), ['bearer   Weird.Token']);
  });

  for (const token of ['empty', 'braces']) {
    it(`200 with ${token === 'empty' ? 'an empty body' : '{}'}: forwarded without extra headers`, async () => {
      const before = backend.seen.length;
      const res = await call({ authorization: `Bearer ${token}`, 'x-userid': 'spoofed' });
      assert.equal(res.status, 200);
      assert.equal(backend.seen.length, before + 1);
      const seen = backend.seen.at(-1);
      const xHeaders = (seen?.rawHeaders ?? [])
        .filter((h, i) => i % 2 === 0 && /^x-/i.test(h))
        .map((h) => h.toLowerCase())
        .sort();
      assert.deepEqual(xHeaders, ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-request-id']);
    });
  }

  it('401 with a JSON body: relayed unchanged (status, body, content type, challenge), backend not called', async () => {
    const before = backend.seen.length;
    const res = await call({ authorization: 'Bearer expired', 'x-request-id': 'deleg-401' });
    assert.equal(res.status, 401);
    assert.equal(res.text, '{"error":"Token expired","success":false}');
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['www-authenticate'], 'Bearer error="invalid_token"');
    assert.equal(res.headers['x-portico-error'], undefined, 'not a gateway error');
    assert.equal(res.headers['x-request-id'], 'deleg-401');
    assert.equal(backend.seen.length, before);
    assert.deepEqual(results.at(-1), {
      requestId: 'deleg-401',
      routeId: 'GET /orders',
      outcome: 'denied',
      detail: 'auth service answered 401',
    });
  });

  it('two Authorization headers: 400 JSON GW_AUTH_AMBIGUOUS, the auth service and the backend are not called', async () => {
    const before = { auth: auth.seen.length, backend: backend.seen.length };
    const res = await request(`${gw.url}/api/orders`, {
      headers: ['authorization', 'Bearer claims', 'Authorization', 'Bearer forged', 'x-request-id', 'deleg-two'],
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['x-portico-error'], 'GW_AUTH_AMBIGUOUS');
    assert.deepEqual(await res.body.json(), { error: 'Several Authorization headers', success: false });
    assert.equal(auth.seen.length, before.auth);
    assert.equal(backend.seen.length, before.backend);
    assert.deepEqual(results.at(-1), {
      requestId: 'deleg-two',
      routeId: 'GET /orders',
      outcome: 'invalid',
      detail: 'several Authorization headers',
    });
  });

  it('403 with a text body: relayed unchanged', async () => {
    const before = backend.seen.length;
    const res = await call({ authorization: 'Bearer forbidden' });
    assert.equal(res.status, 403);
    assert.equal(res.text, 'Access denied');
    assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(res.headers['content-length'], '13');
    assert.equal(backend.seen.length, before);
  });

  it('no Authorization: still asked (decision, README); the service lets a cookie session in', async () => {
    const before = auth.seen.length;
    const res = await call({ cookie: 'sid=valid-session' });
    assert.equal(res.status, 200);
    assert.equal(auth.seen.length, before + 1);
    assert.deepEqual(rawValues(auth.seen.at(-1), 'authorization'), []);
    assert.deepEqual(rawValues(auth.seen.at(-1), 'cookie'), ['sid=valid-session']);
    assert.deepEqual(rawValues(backend.seen.at(-1), 'x-username'), ['cookie-user']);
  });

  it("no Authorization and no session: the service's redirect to its login page is relayed", async () => {
    const before = backend.seen.length;
    const res = await call({});
    assert.equal(res.status, 302);
    assert.equal(res.headers.location, 'https://login.example/?next=%2F');
    assert.equal(res.text, '');
    assert.equal(backend.seen.length, before);
  });

  it('claims that cannot be headers are skipped and logged, the others forwarded', async () => {
    const res = await call({ authorization: 'Bearer evil-claims', 'x-request-id': 'deleg-evil' });
    assert.equal(res.status, 200);
    const seen = backend.seen.at(-1);
    assert.deepEqual(rawValues(seen, 'x-userid'), ['7']);
    assert.deepEqual(rawValues(seen, 'x-role'), []);
    assert.deepEqual(rawValues(seen, 'x-admin'), []);
    assert.deepEqual(rawValues(seen, 'x-request-id'), ['deleg-evil']);
    const warn = gw.logs.find(
      (l) => l.msg === 'auth: claims skipped, not valid as headers' && l.reqId === 'deleg-evil',
    );
    assert.deepEqual(warn?.skipped, [
      { claim: 'role', reason: 'value' },
      { claim: 'bad name', reason: 'name' },
      { claim: 'Request-ID', reason: 'reserved' },
    ]);
  });

  it('a public route never calls the auth service', async () => {
    const before = auth.seen.length;
    for (const headers of [{}, { authorization: 'Bearer claims' }, { authorization: 'Bearer expired' }] as Record<
      string,
      string
    >[]) {
      const res = await call(headers, '/api/catalog');
      assert.equal(res.status, 200);
    }
    assert.equal(auth.seen.length, before);
  });

  it('keep-alive: sequential calls reuse one connection to the auth service', async () => {
    const before = authConnections;
    for (let i = 0; i < 5; i++) assert.equal((await call({ authorization: 'Bearer claims' })).status, 200);
    assert.ok(authConnections - before <= 1, `opened ${authConnections - before} connections`);
  });

  it('the pool survives a reload: no new connection afterwards', async () => {
    assert.equal((await call({ authorization: 'Bearer claims' })).status, 200);
    const before = authConnections;
    gw.reload(`
routes:
  - { method: GET, route: /orders, service: ${backend.host}, path: /orders }
config:
  auth: { authService: "http://${auth.host}", authPath: /v1/check, defaultProtected: true }
`);
    assert.equal((await call({ authorization: 'Bearer claims' })).status, 200);
    assert.equal(authConnections, before);
  });

  // Last: the reload above kept the same auth service; this waits for the 5 s timeout once.
  it('an auth service that never answers: 503 JSON after about 5 s (not later than 6.5 s)', async () => {
    const before = backend.seen.length;
    const started = Date.now();
    const res = await call({ authorization: 'Bearer hang', 'x-request-id': 'deleg-hang' });
    const elapsed = Date.now() - started;
    assert.equal(res.status, 503);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['x-portico-error'], 'GW_AUTH_UNAVAILABLE');
    assert.equal(res.text, '{"error":"Authentication service unavailable","success":false}');
    assert.ok(elapsed >= 4900 && elapsed <= 6500, `answered after ${elapsed} ms`);
    assert.equal(backend.seen.length, before);
    assert.ok(gw.logs.some((l) => l.msg === 'auth service timeout' && l.reqId === 'deleg-hang'));
  });
});

describe('delegated auth service unreachable', () => {
  it('503 JSON at once when nothing listens', async () => {
    // Port 1 (tcpmux) on loopback: nothing listens there, and unlike a port freed by closedPort()
    // it cannot be taken meanwhile by this test's own backend or gateway, or a parallel test's.
    const port = 1;
    const backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
    const gw = await startGateway(`
routes:
  - { method: GET, route: /orders, service: ${backend.host}, path: /orders }
config:
  auth: { authService: "127.0.0.1:${port}", defaultProtected: true }
`);
    try {
      const started = Date.now();
      const res = await request(`${gw.url}/api/orders`, {
        headers: { authorization: 'Bearer x', 'x-request-id': 'unreach' },
      });
      assert.equal(res.statusCode, 503);
      assert.equal(res.headers['x-portico-error'], 'GW_AUTH_UNAVAILABLE');
      assert.deepEqual(await res.body.json(), { error: 'Authentication service unavailable', success: false });
      assert.ok(Date.now() - started < 2000);
      assert.equal(backend.seen.length, 0);
      assert.ok(gw.logs.some((l) => l.msg === 'auth service unreachable' && l.reqId === 'unreach'));
    } finally {
      await closeAll(gw, backend);
    }
  });
});
