/**
 * OAuth2 token introspection (RFC 7662, docs/authentication.md "OAuth2 token introspection")
 * against a real local introspection endpoint (node:http) that checks the gateway's client
 * credentials and form body and counts its calls per token: claims for `require:`, claim headers
 * and `{claims.NAME}` templates; inactive 401; endpoint down, slow, answering garbage or refusing
 * the gateway's credentials 503, never cached; the cache bounded by `exp` and `cacheMaxSec` (on a
 * clock moved by hand); one call per token for 100 concurrent requests over HTTP/1.1 and HTTP/2;
 * WebSocket handshakes and their close at the introspected `exp`; no secret or token in the logs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { connect, type ClientHttp2Session } from 'node:http2';
import { request } from 'undici';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { h2request } from '../support/http2.js';
import {
  bounded,
  openWebSocket,
  startWsBackend,
  upgradeRequest,
  handshakeHeaders,
  type WsBackend,
} from '../support/ws-backend.js';
import { waitFor } from '../support/wait-for.js';
import { closeAll } from '../support/close-all.js';
import { captureLogger } from '../support/capture-logger.js';
import { createIntrospectionAuthenticator } from '../../src/auth/introspection.js';
import type { AuthOutcome } from '../../src/auth/types.js';

const CLIENT_ID = 'portico gw';
const CLIENT_SECRET = 'introspection-client-secret-4f1c';
const PATH = '/oauth2/introspect';

/** What the endpoint answers for a token, chosen by the test; every call counted per token. */
interface Endpoint {
  readonly server: TestBackend;
  readonly calls: Map<string, number>;
  /** Tokens whose answer waits until `release()`. */
  held: Set<string>;
  release(): void;
  total(token: string): number;
}

async function startEndpoint(): Promise<Endpoint> {
  const calls = new Map<string, number>();
  let waiting: (() => void)[] = [];
  const endpoint: Endpoint = {
    server: undefined as unknown as TestBackend,
    calls,
    held: new Set(),
    release() {
      const run = waiting;
      waiting = [];
      for (const answer of run) answer();
    },
    total: (token) => calls.get(token) ?? 0,
  };
  const expected = `Basic ${Buffer.from(`${encodeURIComponent(CLIENT_ID).replace(/%20/g, '+')}:${CLIENT_SECRET}`).toString('base64')}`;
  const server = await startBackend((req, res, body) => {
    if (req.method !== 'POST' || req.url !== PATH) return json(res, 404, { error: 'not_found' });
    if (req.headers.authorization !== expected) return json(res, 401, { error: 'invalid_client' });
    if (req.headers['content-type'] !== 'application/x-www-form-urlencoded')
      return json(res, 400, { error: 'invalid_request', why: 'content-type' });
    const form = new URLSearchParams(body.toString('utf8'));
    const token = form.get('token');
    if (token === null || form.get('token_type_hint') !== 'access_token' || [...form.keys()].length !== 2)
      return json(res, 400, { error: 'invalid_request', why: 'form' });
    calls.set(token, (calls.get(token) ?? 0) + 1);
    const answer = () => answerFor(token, res);
    if (endpoint.held.has(token)) waiting.push(answer);
    else answer();
  });
  (endpoint as { server: TestBackend }).server = server;
  return endpoint;
}

const nowSec = () => Math.floor(Date.now() / 1000);

/** The endpoint's answer, by the token's name. */
function answerFor(token: string, res: import('node:http').ServerResponse): void {
  if (token.startsWith('inactive')) return json(res, 200, { active: false });
  if (token.startsWith('broken')) return json(res, 500, { error: 'server_error' });
  if (token.startsWith('garbage')) {
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': '12' });
    res.end('<html></html');
    return;
  }
  if (token.startsWith('huge')) return json(res, 200, { active: true, pad: 'x'.repeat(100_000) });
  if (token.startsWith('slow')) return; // never answers
  if (token.startsWith('expiring')) {
    // `exp` the first whole second at least 300 ms away: a tunnel opens before it.
    return json(res, 200, { active: true, sub: 'eve', exp: Math.ceil((Date.now() + 300) / 1000) });
  }
  return json(res, 200, {
    active: true,
    sub: `user-${token}`,
    scope: token.includes('admin') ? 'orders:read orders:write' : 'orders:read',
    client_id: 'web-app',
    tenant: 'acme',
    exp: nowSec() + 3600,
  });
}

function gatewayYaml(endpoint: string, backend: TestBackend, extra = ''): string {
  return `
routes:
  - method: GET
    route: /orders
    service: ${backend.host}
    path: /orders
    headers:
      request:
        set:
          X-Caller: "caller:{claims.sub}"
  - { method: GET, route: /admin, service: ${backend.host}, path: /admin, require: { scopes: [orders:write], claims: { tenant: acme, client_id: web-app } } }
  - { method: GET, route: /public, service: ${backend.host}, path: /public, public: true }
config:
  http2: { cleartext: true }
  auth:
    defaultProtected: true
    tokenFrom: [header, { query: access_token }]
    introspection:
      url: ${endpoint}${PATH}
      clientId: ${CLIENT_ID}
      clientSecret: \${IDP_SECRET}${extra}
`;
}

const ENV = { ...process.env, IDP_SECRET: CLIENT_SECRET };

async function call(gw: TestGateway, path: string, token?: string) {
  const r = await request(
    `${gw.url}${path}`,
    token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
  );
  const text = await r.body.text();
  return { status: r.statusCode, headers: r.headers, body: text };
}

describe('OAuth2 token introspection, end to end', () => {
  let endpoint: Endpoint;
  let backend: TestBackend;
  let gw: TestGateway;
  let requestsSeen = 0;
  const tokensUsed: string[] = [];
  const use = (token: string) => (tokensUsed.push(token), token);

  before(async () => {
    endpoint = await startEndpoint();
    backend = await startBackend();
    gw = await startGateway(gatewayYaml(endpoint.server.url, backend, '\n      timeoutSec: 0.5'), ENV);
    gw.gateway.server.on('request', () => requestsSeen++);
  });
  after(() => closeAll(gw, backend, endpoint.server));

  it('an active token: 200, its fields are claims (headers, templates), the endpoint saw a form POST with Basic credentials', async () => {
    const token = use('alice-1');
    const r = await call(gw, '/api/orders', token);
    assert.equal(r.status, 200, r.body);
    const seen = backend.seen.at(-1)!;
    assert.equal(seen.headers['x-sub'], 'user-alice-1');
    assert.equal(seen.headers['x-scope'], 'orders:read');
    assert.equal(seen.headers['x-tenant'], 'acme');
    assert.equal(seen.headers['x-caller'], 'caller:user-alice-1');
    assert.equal(seen.headers['x-active'], undefined, 'booleans are not sent');
    const call0 = endpoint.server.seen.at(-1)!;
    assert.equal(call0.method, 'POST');
    assert.equal(call0.body.toString(), `token=${token}&token_type_hint=access_token`);
    assert.equal(call0.headers['x-request-id'], r.headers['x-request-id']);
    assert.equal(endpoint.total(token), 1);
  });

  it('a warm token is not asked about again', async () => {
    const token = use('alice-2');
    for (let i = 0; i < 5; i++) assert.equal((await call(gw, '/api/orders', token)).status, 200);
    assert.equal(endpoint.total(token), 1);
  });

  it('require: rules read the introspected scope and claims: 403 without the scope, 200 with it', async () => {
    assert.equal((await call(gw, '/api/admin', use('bob'))).status, 403);
    assert.equal((await call(gw, '/api/admin', use('bob-admin'))).status, 200);
  });

  it('a token from the query is checked and removed before the backend', async () => {
    const token = use('query-1');
    const r = await request(`${gw.url}/api/orders?access_token=${token}&page=2`);
    assert.equal(r.statusCode, 200);
    await r.body.text();
    assert.equal(backend.seen.at(-1)!.url, '/orders?page=2');
    assert.equal(endpoint.total(token), 1);
  });

  it('no token: 401 GW_AUTH_MISSING without a call; a public route asks nothing', async () => {
    const before = endpoint.server.seen.length;
    const r = await call(gw, '/api/orders');
    assert.equal(r.status, 401);
    assert.match(r.headers['www-authenticate'] as string, /^Bearer realm="portico"$/);
    assert.equal((await call(gw, '/api/public')).status, 200);
    assert.equal(endpoint.server.seen.length, before);
  });

  it('an inactive token: 401 GW_AUTH_INVALID with invalid_token, asked again next time (not cached)', async () => {
    const token = use('inactive-1');
    const r = await call(gw, '/api/orders', token);
    assert.equal(r.status, 401);
    assert.deepEqual(JSON.parse(r.body), { error: 'Invalid or expired token', success: false });
    assert.match(r.headers['www-authenticate'] as string, /error="invalid_token"/);
    assert.equal((await call(gw, '/api/orders', token)).status, 401);
    assert.equal(endpoint.total(token), 2);
  });

  const failures = [
    { name: 'answering 500', token: 'broken-1' },
    { name: 'answering HTML', token: 'garbage-1' },
    { name: 'answering more than 64 KiB', token: 'huge-1' },
    { name: 'silent past timeoutSec', token: 'slow-1' },
  ];
  for (const f of failures)
    it(`the endpoint ${f.name}: 503 GW_AUTH_UNAVAILABLE, never cached`, async () => {
      const token = use(f.token);
      const started = performance.now();
      const r = await call(gw, '/api/orders', token);
      assert.equal(r.status, 503);
      assert.deepEqual(JSON.parse(r.body), { error: 'Authentication service unavailable', success: false });
      assert.ok(performance.now() - started < 3_000, 'bounded by timeoutSec');
      assert.equal((await call(gw, '/api/orders', token)).status, 503);
      assert.equal(endpoint.total(token), 2, 'a failure is not remembered');
    });

  it('100 concurrent HTTP/1.1 requests with one new token: one introspection call', async () => {
    const token = use('crowd-h1');
    endpoint.held.add(token);
    const seenBefore = requestsSeen;
    const answers = Array.from({ length: 100 }, () => call(gw, '/api/orders', token));
    await waitFor(() => requestsSeen - seenBefore === 100 && endpoint.total(token) === 1, 5_000, '100 requests in');
    endpoint.release();
    const statuses = (await Promise.all(answers)).map((a) => a.status);
    assert.deepEqual(new Set(statuses), new Set([200]));
    assert.equal(endpoint.total(token), 1);
  });

  describe('over HTTP/2 (h2c)', () => {
    let session: ClientHttp2Session;
    before(() => {
      session = connect(gw.url);
    });
    after(() => session.close());
    const auth = (token: string) => ({ authorization: `Bearer ${token}` });

    it('active 200 with the claims, inactive 401, endpoint trouble 503', async () => {
      const ok = await h2request(session, '/api/orders', auth(use('h2-carol')));
      assert.equal(ok.status, 200);
      assert.equal(backend.seen.at(-1)!.headers['x-sub'], 'user-h2-carol');
      assert.equal((await h2request(session, '/api/orders', auth(use('inactive-h2')))).status, 401);
      assert.equal((await h2request(session, '/api/orders', auth(use('broken-h2')))).status, 503);
    });

    it('100 concurrent streams with one new token: one introspection call', async () => {
      const token = use('crowd-h2');
      endpoint.held.add(token);
      const answers = Array.from({ length: 100 }, () => h2request(session, '/api/orders', auth(token)));
      // The h2 listener is not reachable from here to count arrivals: streams that come in after the
      // release find the cached answer, those before it wait for the one call.
      await waitFor(() => endpoint.total(token) === 1, 5_000, 'the first call');
      endpoint.release();
      const statuses = (await Promise.all(answers)).map((a) => a.status);
      assert.deepEqual(new Set(statuses), new Set([200]));
      assert.equal(endpoint.total(token), 1);
    });
  });

  it('the client secret, its Basic credentials and the tokens never reach a log line', () => {
    const text = JSON.stringify(gw.logs);
    assert.ok(gw.logs.length > 0);
    assert.ok(text.includes('introspection'), 'the failures were logged');
    const basic = Buffer.from(`portico+gw:${CLIENT_SECRET}`).toString('base64');
    for (const secret of [CLIENT_SECRET, basic, ...tokensUsed]) assert.ok(!text.includes(secret), `${secret} logged`);
  });
});

describe('introspection: the endpoint down, or refusing the gateway', () => {
  let backend: TestBackend;
  let endpoint: Endpoint;
  const gateways: TestGateway[] = [];
  before(async () => {
    backend = await startBackend();
    endpoint = await startEndpoint();
  });
  after(() => closeAll(...gateways, backend, endpoint.server));

  it('nothing listening: 503 GW_AUTH_UNAVAILABLE', async () => {
    const gw = await startGateway(gatewayYaml(`http://127.0.0.1:${await closedPort()}`, backend), ENV);
    gateways.push(gw);
    const r = await call(gw, '/api/orders', 'alice');
    assert.equal(r.status, 503);
    assert.equal(backend.seen.length, 0);
  });

  it('a wrong client secret: the endpoint answers 401 to the gateway, the client gets 503 and the log says what to check', async () => {
    const gw = await startGateway(gatewayYaml(endpoint.server.url, backend), {
      ...ENV,
      IDP_SECRET: 'wrong-secret-value',
    });
    gateways.push(gw);
    assert.equal((await call(gw, '/api/orders', 'alice')).status, 503);
    const line = gw.logs.find((l) => l.hint === 'check clientId and clientSecret');
    assert.ok(line, JSON.stringify(gw.logs));
    assert.ok(!JSON.stringify(gw.logs).includes('wrong-secret-value'));
  });
});

describe('introspection: WebSocket handshakes', () => {
  let endpoint: Endpoint;
  let ws: WsBackend;
  let gw: TestGateway;
  before(async () => {
    endpoint = await startEndpoint();
    ws = await startWsBackend();
    gw = await startGateway(
      `
routes:
  - { method: GET, route: /chat, service: ${ws.host}, path: /echo, isWebSocket: true }
config:
  auth:
    defaultProtected: true
    introspection: { url: "${endpoint.server.url}${PATH}", clientId: "${CLIENT_ID}", clientSecret: "\${IDP_SECRET}" }
`,
      ENV,
    );
  });
  after(() => closeAll(gw, ws, endpoint.server));

  it('an active token opens the tunnel; an inactive one gets 401 before any upgrade', async () => {
    const { ws: client } = await openWebSocket(`ws://127.0.0.1:${gw.port}/api/chat`, [], {
      headers: { authorization: 'Bearer dave' },
    });
    client.close();
    const refused = await upgradeRequest(
      gw.url,
      '/api/chat',
      handshakeHeaders({ authorization: 'Bearer inactive-ws' }),
    );
    assert.equal(refused.kind, 'response');
    assert.equal(refused.status, 401);
    assert.equal(ws.upgrades.length, 1);
  });

  it('the tunnel closes at the introspected exp with 1008 "token expired"', async () => {
    const { ws: client } = await openWebSocket(`ws://127.0.0.1:${gw.port}/api/chat`, [], {
      headers: { authorization: 'Bearer expiring-1' },
    });
    const closed = await bounded(
      new Promise<{ code: number; reason: string }>((resolve) =>
        client.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })),
      ),
      3_000,
      'close at exp',
    );
    assert.deepEqual(closed, { code: 1008, reason: 'token expired' });
  });
});

describe('introspection cache: bounded by exp and cacheMaxSec (clock moved by hand)', () => {
  let server: TestBackend;
  let calls = 0;
  let exp = 0;
  let clock = 1_700_000_000_000;
  before(async () => {
    server = await startBackend((_req, res) => {
      calls++;
      json(res, 200, { active: true, sub: 'u1', exp });
    });
  });
  after(() => server.close());

  function authenticator(cacheMaxSec: number) {
    const { logger } = captureLogger();
    return createIntrospectionAuthenticator({
      url: `${server.url}${PATH}`,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      cacheMaxSec,
      timeoutSec: 2,
      issuer: undefined,
      audience: undefined,
      clockToleranceSec: 0,
      logger,
      now: () => clock,
    });
  }
  const req = (token: string) =>
    ({ headers: { authorization: `Bearer ${token}` }, rawHeaders: [] }) as unknown as IncomingMessage;
  async function ok(auth: ReturnType<typeof authenticator>, token: string): Promise<AuthOutcome> {
    const outcome = await auth.authenticate(req(token), 'rid');
    assert.ok(outcome.ok, JSON.stringify(outcome));
    return outcome;
  }

  it('an entry ends at the token exp when that comes before cacheMaxSec', async () => {
    const auth = authenticator(300);
    exp = clock / 1000 + 30;
    calls = 0;
    await ok(auth, 't1');
    clock += 29_000;
    const warm = auth.authenticate(req('t1'), 'rid');
    assert.ok(!(warm instanceof Promise), 'a cached answer comes back without a promise');
    assert.equal(calls, 1);
    clock += 2_000;
    // Past exp the endpoint is asked again (and here still says active with the old exp: refused).
    const late = await auth.authenticate(req('t1'), 'rid');
    assert.equal(calls, 2);
    assert.ok(!late.ok && late.code === 'GW_AUTH_INVALID');
    await auth.close?.();
  });

  it('an entry ends after cacheMaxSec when exp is further', async () => {
    const auth = authenticator(10);
    exp = clock / 1000 + 3600;
    calls = 0;
    await ok(auth, 't2');
    clock += 9_000;
    await ok(auth, 't2');
    assert.equal(calls, 1);
    clock += 2_000;
    await ok(auth, 't2');
    assert.equal(calls, 2);
    await auth.close?.();
  });

  it('cacheMaxSec 0: every request asks', async () => {
    const auth = authenticator(0);
    exp = clock / 1000 + 3600;
    calls = 0;
    await ok(auth, 't3');
    await ok(auth, 't3');
    assert.equal(calls, 2);
    await auth.close?.();
  });

  it('the same token written with another case of "bearer" or extra spaces shares the entry', async () => {
    const auth = authenticator(60);
    exp = clock / 1000 + 3600;
    calls = 0;
    await ok(auth, 't4');
    const other = { headers: { authorization: 'bearer   t4' }, rawHeaders: [] } as unknown as IncomingMessage;
    const outcome = auth.authenticate(other, 'rid');
    assert.ok(!(outcome instanceof Promise) && outcome.ok);
    assert.equal(calls, 1);
    await auth.close?.();
  });
});
