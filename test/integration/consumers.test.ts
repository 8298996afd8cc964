/**
 * Consumers and API keys end to end (docs/consumers.md): a key in a header or the query
 * authenticates a protected route as its consumer, whose claims meet `require:` rules, become
 * `X-<claim>` headers and fill `{claims.NAME}`; the key never reaches the backend; a key beside a
 * token, or sent twice, is refused 400; a missing or unknown key gets 401 with an `ApiKey`
 * challenge. The same over HTTP/1.1, HTTP/2 (h2c) and WebSocket handshakes, and a consumers file
 * that reloads on its own and keeps its keys when a new version is invalid.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ClientHttp2Session } from 'node:http2';
import { request as httpRequest } from 'node:http';
import { SignJWT } from 'jose';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { h2request } from '../support/http2.js';
import {
  handshakeHeaders,
  openWebSocket,
  startWsBackend,
  upgradeRequest,
  type WsBackend,
} from '../support/ws-backend.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'consumers-test-secret-0123456789abcdef0123';
const hash = (key: string) => `sha256:${createHash('sha256').update(key).digest('hex')}`;

/** Two keys for acme (a rotation in progress), one for globex. */
const ACME_OLD = 'acme-key-2025-old-0123456789abcdef';
const ACME_NEW = 'acme-key-2026-new-0123456789abcdef';
const GLOBEX = 'globex-key-0123456789abcdef012345';

/** A GET with exactly these raw headers (a flat name, value list: names may repeat). */
function rawGet(url: string, path: string, headers: string[]): Promise<{ status: number; code: unknown }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path, headers: ['host', u.host, ...headers] });
    req.on('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, code: res.headers['x-portico-error'] });
    });
    req.on('error', reject);
    req.end();
  });
}

function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));
}

/** The configuration of docs/consumers.md, with the backend's address and real hashes. */
function gatewayYaml(backend: string, ws: string): string {
  return `
routes:
  - { method: GET, route: /orders, service: ${backend}, path: /orders, protected: true }
  - method: GET
    route: /reports
    service: ${backend}
    path: /reports
    require: { claims: { tier: gold } }
    headers:
      request:
        set: { X-Customer: "customer:{claims.customer}" }
  - { method: GET, route: /status, service: ${backend}, path: /status, public: true }
  - { method: GET, route: /feed, service: ${ws}, path: /echo, isWebSocket: true, protected: true }
consumers:
  - id: acme
    keys:
      - ${hash(ACME_OLD)}
      - ${hash(ACME_NEW)}
    claims: { customer: acme, tier: gold }
    plan: gold
  - id: globex
    keys: [${hash(GLOBEX)}]
    claims: { customer: globex, tier: silver }
config:
  http2: { cleartext: true }
  auth:
    apiKey: { header: X-API-Key, query: api_key }
    secret: ${SECRET}
`;
}

describe('API keys on protected routes', () => {
  let backend: TestBackend;
  let wsBackend: WsBackend;
  let gw: TestGateway;
  let session: ClientHttp2Session;

  before(async () => {
    backend = await startBackend();
    wsBackend = await startWsBackend();
    gw = await startGateway(gatewayYaml(backend.host, wsBackend.host));
    session = connect(gw.url);
  });
  after(async () => {
    session?.close();
    await closeAll(gw, backend, wsBackend);
  });

  const lastSeen = () => backend.seen[backend.seen.length - 1]!;

  it('a valid key in the header: 200, the backend sees the claims, never the key', async () => {
    const res = await gw.get('/api/orders?page=2', { headers: { 'X-API-Key': GLOBEX } });
    assert.equal(res.status, 200);
    const seen = lastSeen();
    assert.equal(seen.url, '/orders?page=2');
    assert.equal(seen.headers['x-api-key'], undefined);
    assert.equal(seen.headers['x-customer'], 'globex');
    assert.ok(!JSON.stringify(seen.rawHeaders).includes(GLOBEX));
  });

  it('a valid key in the query: 200, the parameter is taken out of the backend query', async () => {
    const res = await gw.get(`/api/orders?page=2&api_key=${GLOBEX}&sort=asc`);
    assert.equal(res.status, 200);
    assert.equal(lastSeen().url, '/orders?page=2&sort=asc');
  });

  it('both keys of a consumer work while it rotates', async () => {
    for (const key of [ACME_OLD, ACME_NEW])
      assert.equal((await gw.get('/api/orders', { headers: { 'x-api-key': key } })).status, 200);
  });

  const refusals: { name: string; headers: Record<string, string>; query: string; status: number; code: string }[] = [
    { name: 'no credential at all', headers: {}, query: '', status: 401, code: 'GW_AUTH_MISSING' },
    {
      name: 'an unknown key',
      headers: { 'x-api-key': 'not-a-key' },
      query: '',
      status: 401,
      code: 'GW_AUTH_KEY_INVALID',
    },
    { name: 'an empty key', headers: {}, query: '?api_key=', status: 401, code: 'GW_AUTH_KEY_INVALID' },
    {
      name: 'a key that is a near miss',
      headers: { 'x-api-key': `${GLOBEX.slice(0, -1)}X` },
      query: '',
      status: 401,
      code: 'GW_AUTH_KEY_INVALID',
    },
    {
      name: 'a key in the header and the query',
      headers: { 'x-api-key': GLOBEX },
      query: `?api_key=${GLOBEX}`,
      status: 400,
      code: 'GW_AUTH_CREDENTIALS_AMBIGUOUS',
    },
    {
      name: 'the key parameter twice',
      headers: {},
      query: `?api_key=${GLOBEX}&api_key=${ACME_NEW}`,
      status: 400,
      code: 'GW_AUTH_CREDENTIALS_AMBIGUOUS',
    },
    {
      name: 'a key beside a bearer token',
      headers: { 'x-api-key': GLOBEX, authorization: 'Bearer x.y.z' },
      query: '',
      status: 400,
      code: 'GW_AUTH_CREDENTIALS_AMBIGUOUS',
    },
  ];
  for (const c of refusals)
    it(`refuses ${c.name}: ${c.status} ${c.code}, nothing forwarded`, async () => {
      const before = backend.seen.length;
      const res = await gw.get(`/api/orders${c.query}`, { headers: c.headers });
      assert.equal(res.status, c.status);
      assert.equal(res.headers['x-portico-error'], c.code);
      assert.equal(backend.seen.length, before);
      if (c.status === 401)
        assert.match(
          String(res.headers['www-authenticate']),
          /ApiKey realm="portico", header="X-API-Key", query="api_key"/,
        );
      for (const key of [GLOBEX, ACME_NEW])
        assert.ok(!gw.logs.some((l) => JSON.stringify(l).includes(key)), 'a key was logged');
    });

  it('no credential: the 401 names both the bearer and the key scheme', async () => {
    const res = await gw.get('/api/orders');
    assert.match(String(res.headers['www-authenticate']), /^Bearer realm="portico".*, ApiKey realm="portico"/);
  });

  it('the key header sent twice is refused 400', async () => {
    const res = await rawGet(gw.url, '/api/orders', ['x-api-key', GLOBEX, 'X-Api-Key', ACME_NEW]);
    assert.equal(res.status, 400);
    assert.equal(res.code, 'GW_AUTH_CREDENTIALS_AMBIGUOUS');
  });

  it('a token still works beside keys; its caller is its sub', async () => {
    const res = await gw.get('/api/orders', {
      headers: { authorization: `Bearer ${await token({ sub: 'u1', customer: 'initech' })}` },
    });
    assert.equal(res.status, 200);
    assert.equal(lastSeen().headers['x-customer'], 'initech');
  });

  it('require: rules and {claims.NAME} templates read the consumer claims', async () => {
    const gold = await gw.get('/api/reports', { headers: { 'x-api-key': ACME_NEW } });
    assert.equal(gold.status, 200);
    assert.equal(lastSeen().headers['x-customer'], 'customer:acme');
    const silver = await gw.get('/api/reports', { headers: { 'x-api-key': GLOBEX } });
    assert.equal(silver.status, 403);
    assert.equal(silver.headers['x-portico-error'], 'GW_AUTH_FORBIDDEN');
  });

  it('a public route reads no key, but neither the header nor the parameter reaches its backend', async () => {
    const res = await gw.get(`/api/status?api_key=${GLOBEX}&x=1`, { headers: { 'x-api-key': GLOBEX } });
    assert.equal(res.status, 200);
    assert.equal(lastSeen().url, '/status?x=1');
    assert.equal(lastSeen().headers['x-api-key'], undefined);
  });

  it('HTTP/2: a key authenticates, a bad one gets 401 with the challenge, the key stays at the gateway', async () => {
    const ok = await h2request(session, '/api/orders?api_key=' + GLOBEX);
    assert.equal(ok.status, 200);
    assert.equal(lastSeen().url, '/orders');
    const header = await h2request(session, '/api/reports', { 'x-api-key': ACME_OLD });
    assert.equal(header.status, 200);
    assert.equal(lastSeen().headers['x-api-key'], undefined);
    const bad = await h2request(session, '/api/orders', { 'x-api-key': 'wrong' });
    assert.equal(bad.status, 401);
    assert.match(String(bad.headers['www-authenticate']), /ApiKey realm="portico"/);
    const twice = await h2request(session, `/api/orders?api_key=${GLOBEX}`, { 'x-api-key': GLOBEX });
    assert.equal(twice.status, 400);
  });

  it('WebSocket: a key in the handshake header or query opens the tunnel; the backend never sees it', async () => {
    const port = new URL(gw.url).port;
    const viaHeader = await openWebSocket(`ws://127.0.0.1:${port}/api/feed`, undefined, {
      headers: { 'x-api-key': GLOBEX },
    });
    viaHeader.ws.close();
    const viaQuery = await openWebSocket(`ws://127.0.0.1:${port}/api/feed?api_key=${ACME_NEW}&room=1`);
    viaQuery.ws.close();
    const [first, second] = wsBackend.upgrades.slice(-2);
    assert.equal(first!.headers['x-api-key'], undefined);
    assert.equal(first!.headers['x-customer'], 'globex');
    assert.equal(second!.url, '/echo?room=1');
    assert.equal(second!.headers['x-customer'], 'acme');
  });

  it('WebSocket: an unknown key refuses the handshake with 401 before any backend connection', async () => {
    const connections = wsBackend.connections();
    const res = await upgradeRequest(gw.url, '/api/feed', handshakeHeaders({ 'x-api-key': 'wrong' }));
    assert.equal(res.kind, 'response');
    assert.equal(res.status, 401);
    assert.equal(res.headers['x-portico-error'], 'GW_AUTH_KEY_INVALID');
    assert.equal(wsBackend.connections(), connections);
  });
});

describe('API keys alone (no token mode)', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend();
    gw = await startGateway(`
routes:
  - { method: GET, route: /orders, service: ${backend.host}, path: /orders }
consumers:
  - id: globex
    keys: [${hash(GLOBEX)}]
config:
  auth:
    apiKey: { header: X-API-Key }
    defaultProtected: true
`);
  });
  after(() => closeAll(gw, backend));

  it('no key: 401 GW_AUTH_KEY_MISSING with the ApiKey challenge', async () => {
    const res = await gw.get('/api/orders');
    assert.equal(res.status, 401);
    assert.equal(res.headers['x-portico-error'], 'GW_AUTH_KEY_MISSING');
    assert.equal(res.headers['www-authenticate'], 'ApiKey realm="portico", header="X-API-Key"');
  });

  it('a bearer token beside the key is a second credential: 400', async () => {
    const res = await gw.get('/api/orders', { headers: { 'x-api-key': GLOBEX, authorization: 'Bearer abc' } });
    assert.equal(res.status, 400);
  });

  it("a valid key: 200; the query is the client's when no parameter is configured", async () => {
    const res = await gw.get('/api/orders?api_key=abc', { headers: { 'x-api-key': GLOBEX } });
    assert.equal(res.status, 200);
    assert.equal(backend.seen.at(-1)!.url, '/orders?api_key=abc');
  });
});

describe('a consumers file reloads on its own', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let dir: string;
  let file: string;
  const CONSUMERS = (keys: string[]) =>
    `consumers:\n  - id: acme\n    keys:\n${keys.map((k) => `      - ${hash(k)}\n`).join('')}    claims: { customer: acme }\n`;
  const status = async (key: string) => (await gw.get('/api/orders', { headers: { 'x-api-key': key } })).status;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portico-consumers-'));
    file = join(dir, 'consumers.yaml');
    writeFileSync(file, CONSUMERS([ACME_OLD]));
    backend = await startBackend();
    gw = await startGateway(`
routes:
  - { method: GET, route: /orders, service: ${backend.host}, path: /orders, protected: true }
config:
  consumersFile: ${file}
  auth:
    apiKey: { header: X-API-Key }
`);
  });
  after(async () => {
    await closeAll(gw, backend);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a new key works once the file is saved, the removed one stops working, routes untouched', async () => {
    assert.equal(await status(ACME_OLD), 200);
    assert.equal(await status(ACME_NEW), 401);
    writeFileSync(file, CONSUMERS([ACME_NEW]));
    await waitFor(() => gw.logs.some((l) => l.msg === 'consumers reloaded'), 5_000, 'consumers reloaded');
    assert.equal(await status(ACME_NEW), 200);
    assert.equal(await status(ACME_OLD), 401);
    assert.ok(!gw.logs.some((l) => l.msg === 'configuration reloaded'));
  });

  it('an invalid file keeps the running keys and logs FILE:LINE:COL problems', async () => {
    writeFileSync(
      file,
      `consumers:\n  - id: acme\n    keys: [${hash(ACME_OLD)}]\n    claim: {}\n  - id: acme\n    keys: [sha256:abc]\n`,
    );
    await waitFor(
      () => gw.logs.some((l) => l.msg === 'consumers file rejected; keeping the running keys'),
      5_000,
      'rejection',
    );
    const line = gw.logs.find((l) => l.msg === 'consumers file rejected; keeping the running keys')!;
    const problems = line.problems as string[];
    assert.ok(
      problems.some(
        (p) => p.startsWith(`${file}:4:5: consumers[0]: unknown key "claim"`) && p.includes('did you mean "claims"?'),
      ),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => p.startsWith(`${file}:5:9: consumers[1].id: "acme" is already the id of consumers[0]`)),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => p.startsWith(`${file}:6:12: consumers[1].keys[0]`)),
      problems.join('\n'),
    );
    assert.equal(await status(ACME_NEW), 200);
  });
});

describe('the consumer of a request meters its quota (docs/consumers.md "Quotas")', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend();
    gw = await startGateway(`
routes:
  - { method: GET, route: /orders, service: ${backend.host}, path: /orders, protected: true }
consumers:
  - { id: acme, keys: ["${hash(ACME_NEW)}"], plan: gold }
  - { id: globex, keys: ["${hash(GLOBEX)}"] }
config:
  auth:
    apiKey: { header: X-API-Key }
    secret: ${SECRET}
    planClaim: plan
  quotas:
    key: consumer
    day: 1
    plans:
      gold: { day: 2 }
`);
  });
  after(() => closeAll(gw, backend));

  const statuses = async (headers: Record<string, string>, n: number) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await gw.get('/api/orders', { headers })).status);
    return out;
  };

  it("a key's consumer is counted by its id, under its plan's windows", async () => {
    assert.deepEqual(await statuses({ 'x-api-key': ACME_NEW }, 3), [200, 200, 429]);
    assert.deepEqual(await statuses({ 'x-api-key': GLOBEX }, 2), [200, 429]);
  });

  it("a token's caller is its sub, its plan the claim auth.planClaim names", async () => {
    const gold = `Bearer ${await token({ sub: 'u-gold', plan: 'gold' })}`;
    assert.deepEqual(await statuses({ authorization: gold }, 3), [200, 200, 429]);
    const plain = `Bearer ${await token({ sub: 'u-plain' })}`;
    assert.deepEqual(await statuses({ authorization: plain }, 2), [200, 429]);
  });
});
