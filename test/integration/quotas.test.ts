/**
 * Limits and quotas by caller through the real gateway (docs/rate-limiting-and-cors.md,
 * docs/consumers.md#quotas): rate limits keyed by a claim or a header, quotas per caller with
 * `Retry-After` to the window's end and the RateLimit fields, over HTTP/1.1, h2c and WebSocket
 * handshakes; refusals in /metrics by route only; two gateways sharing a real Redis never admit
 * more than the quota together.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { Agent } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { h2request } from '../support/http2.js';
import { get } from '../support/http.js';
import { handshakeHeaders, startWsBackend, upgradeRequest, type WsBackend } from '../support/ws-backend.js';
import { Redis } from 'ioredis';
import { waitFor } from '../support/wait-for.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { closeAll } from '../support/close-all.js';
import { hs256Signer } from '../support/tokens.js';
import { adminRequest } from '../support/admin.js';
import type { StatusDocument } from '../../src/admin/types.js';

const SECRET = 'quota-tests-secret-0123456789abcdef0123456789';
const sign = hs256Signer(SECRET);
const bearer = async (sub: string) => ({ authorization: `Bearer ${await sign({ sub })}` });

/** Seconds until the end of the current UTC day, as the gateway computes Retry-After. */
const secondsToMidnight = () => Math.ceil((Math.ceil(Date.now() / 86_400_000) * 86_400_000 - Date.now()) / 1000);

describe('limits and quotas by caller', () => {
  let backend: TestBackend;
  let ws: WsBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    ws = await startWsBackend();
    gw = await startGateway(`
routes:
  - method: GET
    route: /reports
    service: ${backend.host}
    path: /reports
    protected: true
    rateLimit: { requestsPerSec: 0.1, burst: 2, key: claims.sub }
  - method: GET
    route: /search
    service: ${backend.host}
    path: /search
    rateLimit: { requestsPerSec: 0.1, burst: 1, key: "header:X-Tenant" }
  - method: GET
    route: /exports
    service: ${backend.host}
    path: /exports
    protected: true
    quota: { key: claims.sub, day: 3 }
  - method: GET
    route: /live
    service: ${ws.host}
    path: /live
    protected: true
    isWebSocket: true
    quota: { key: claims.sub, day: 1 }
config:
  http2: { cleartext: true }
  auth: { secret: ${SECRET} }
  admin: { port: 0 }
`);
  });
  after(() => closeAll(gw, backend, ws));

  it('a rate limit keyed by claims.sub gives each subject its own bucket, after auth', async () => {
    const alice = await bearer('alice');
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await gw.get('/api/reports', { headers: alice })).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    const bob = await gw.get('/api/reports', { headers: await bearer('bob') });
    assert.equal(bob.status, 200, 'another subject, from the same address');
    assert.equal(bob.headers['ratelimit-policy'], '"burst";q=2;w=20');
    assert.equal(bob.headers.ratelimit, '"burst";r=1;t=10');
    assert.equal(bob.headers['ratelimit-limit'], '2', 'the older draft fields stay');
    // A request without a token is refused by auth, and takes no token from anyone's bucket.
    assert.equal((await gw.get('/api/reports')).status, 401);
  });

  it('a rate limit keyed by a header: one bucket per value; without it, the client address', async () => {
    const a = () => gw.get('/api/search', { headers: { 'x-tenant': 'acme' } });
    assert.equal((await a()).status, 200);
    const refused = await a();
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '10');
    assert.equal(refused.headers.ratelimit, '"burst";r=0;t=10');
    assert.equal((await gw.get('/api/search', { headers: { 'x-tenant': 'globex' } })).status, 200);
    assert.equal((await gw.get('/api/search')).status, 200, 'no header: the address has its own bucket');
    assert.equal((await gw.get('/api/search')).status, 429);
  });

  it('a daily quota per subject over HTTP/1.1 and h2: 429 GW_QUOTA_EXCEEDED, Retry-After to midnight UTC', async () => {
    const carol = await bearer('carol');
    const first = await gw.get('/api/exports', { headers: carol });
    assert.equal(first.status, 200);
    assert.equal(first.headers['ratelimit-policy'], '"quota-day";q=3;w=86400');
    assert.match(String(first.headers.ratelimit), /^"quota-day";r=2;t=\d+$/);
    const session = connect(gw.url);
    try {
      const h2 = [];
      for (let i = 0; i < 3; i++) h2.push(await h2request(session, '/api/exports', carol));
      assert.deepEqual(
        h2.map((a) => a.status),
        [200, 200, 429],
      );
      const refused = h2[2]!;
      assert.deepEqual(JSON.parse(refused.body), { error: 'Quota exceeded', success: false });
      assert.equal(refused.headers['x-portico-error'], 'GW_QUOTA_EXCEEDED');
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(Math.abs(retryAfter - secondsToMidnight()) <= 2, `Retry-After ${retryAfter}`);
      assert.equal(refused.headers.ratelimit, `"quota-day";r=0;t=${retryAfter}`);
    } finally {
      session.close();
    }
    assert.equal((await gw.get('/api/exports', { headers: await bearer('dave') })).status, 200);
    assert.equal(backend.seen.filter((s) => s.url === '/exports').length, 4, 'refusals never reach the backend');
  });

  it('a WebSocket handshake counts in the quota and is refused past it', async () => {
    const erin = await bearer('erin');
    const opened = await upgradeRequest(gw.url, '/api/live', handshakeHeaders(erin));
    assert.equal(opened.status, 101);
    if (opened.kind === 'upgrade') opened.socket.destroy();
    const refused = await upgradeRequest(gw.url, '/api/live', handshakeHeaders(erin));
    assert.equal(refused.kind, 'response');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['x-portico-error'], 'GW_QUOTA_EXCEEDED');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
  });

  it('the status document lists the callers nearest their quota, fullest first', async () => {
    const doc = (await adminRequest(gw.gateway.adminAddress()!.port, '/api/status')).json() as StatusDocument;
    assert.equal(doc.quotas.enabled, true);
    const carol = doc.callers.find((c) => c.caller === 'claim:carol');
    assert.ok(carol !== undefined, JSON.stringify(doc.callers));
    assert.equal(carol.route, 'GET /exports');
    assert.deepEqual(
      carol.windows.map((w) => [w.window, w.used, w.limit]),
      [['day', 3, 3]],
    );
    assert.equal(carol.quotaRefused, 1);
    assert.equal(doc.callers.find((c) => c.caller === 'claim:alice')?.rateLimited, 1, 'rate-limit refusals too');
    assert.ok(doc.callers.length <= 10);
  });

  it('/metrics counts refusals by route, never by caller', async () => {
    const metrics = (await gw.get('/metrics')).text;
    assert.match(metrics, /portico_quota_exceeded_total\{route="\/exports"\} 1\n/);
    assert.match(metrics, /portico_rate_limited_total\{route="\/reports"\} 1\n/);
    assert.doesNotMatch(metrics, /carol|alice|acme/);
  });
});

/** The client names of the connections Redis has open. */
async function clientNames(url: string): Promise<string[]> {
  const raw = new Redis(url);
  try {
    const list = String(await raw.client('LIST'));
    return [...list.matchAll(/ name=(\S*)/g)].map((m) => m[1]!);
  } finally {
    raw.disconnect();
  }
}

describe('quotas shared through Redis', () => {
  let redis: TestRedis;
  let backend: TestBackend;
  before(async () => {
    redis = await startRedis();
    backend = await startBackend((_req, res) => json(res, 200, {}));
  });
  after(async () => {
    await closeAll(backend);
    await redis?.stop();
  });

  it('two gateways sharing Redis never admit more than the quota together', async () => {
    const yaml = `
routes:
  - { method: GET, route: /metered, service: ${backend.host}, path: /metered }
config:
  quotas: { key: "header:X-Api-Client", minute: 1000, day: 25 }
  redis: { url: "${redis.url}", commandTimeoutMs: 5000, keyPrefix: "two:", required: true }
`;
    const a = await startGateway(yaml);
    const b = await startGateway(yaml);
    const agent = new Agent({ connections: 16 });
    try {
      // redis.required: /ready waits for both connections, the shared one and the quotas' own.
      for (const g of [a, b]) await waitFor(async () => (await get(`${g.url}/ready`)).status === 200, 10_000, 'ready');
      const headers = { 'x-api-client': 'shared-client' };
      const statuses = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          get(`${(i % 2 === 0 ? a : b).url}/api/metered`, { headers, dispatcher: agent }).then((r) => r.status),
        ),
      );
      assert.equal(statuses.filter((s) => s === 200).length, 25, `statuses ${statuses.join(' ')}`);
      assert.equal(statuses.filter((s) => s === 429).length, 35);
      const other = await get(`${b.url}/api/metered`, { headers: { 'x-api-client': 'another' } });
      assert.equal(other.status, 200);
      assert.match(String(other.headers.ratelimit), /"quota-day";r=24;/);
      // Each gateway counts quotas on a connection of its own, beside the shared one.
      const names = await clientNames(redis.url);
      assert.equal(names.filter((n) => n === 'portico-quotas').length, 2, names.join(' '));
      assert.equal(names.filter((n) => n === 'portico').length, 2, names.join(' '));
    } finally {
      await agent.close();
      await closeAll(a, b);
    }
  });
});
