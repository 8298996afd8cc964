/**
 * A rate limit by consumer with API keys (docs/rate-limiting-and-cors.md "Keys"): one bucket per
 * consumer whatever its address, a token whose `sub` is a consumer's id in that consumer's bucket,
 * a request without credentials refused by auth before any bucket, and the RateLimit fields; the
 * rate limit and the quota of a key's consumer over h2c and on WebSocket handshakes.
 * (Quotas by a key's consumer and plan over HTTP/1.1: test/integration/consumers.test.ts.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect } from 'node:http2';
import { h2request } from '../support/http2.js';
import { handshakeHeaders, startWsBackend, upgradeRequest, type WsBackend } from '../support/ws-backend.js';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { hs256Signer } from '../support/tokens.js';

const SECRET = 'rate-limit-consumers-secret-0123456789abcdef';
const ACME = 'acme-quota-key-0123456789abcdef0123';
const GLOBEX = 'globex-quota-key-0123456789abcdef01';
/** The hashes written in docs/rate-limiting-and-cors.md's example. */
const ACME_HASH = 'sha256:ba925cf0a66b597c02f7bad0d8212f16e304dffa1310682912e4a31a1322dc1e';
const GLOBEX_HASH = 'sha256:d6bce043d9e38e45e32988b854f2b91c095de16dadb3b284375ecf9289222363';

const signClaims = hs256Signer(SECRET);
const token = (sub: string) => signClaims({ sub });

describe('a rate limit by consumer, with API keys', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    gw = await startGateway(`
routes:
  - method: GET
    route: /search
    service: ${backend.host}
    path: /search
    protected: true
    rateLimit: { requestsPerSec: 0.1, burst: 2, key: consumer }
consumers:
  - { id: acme, keys: ["${ACME_HASH}"] }
  - { id: globex, keys: ["${GLOBEX_HASH}"] }
config:
  auth:
    apiKey: { header: X-API-Key }
    secret: ${SECRET}
`);
  });
  after(() => closeAll(gw, backend));

  const statuses = async (n: number, headers: Record<string, string>) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await gw.get('/api/search', { headers })).status);
    return out;
  };

  it('the hashes of the docs are the keys of this test', () => {
    const hash = (key: string) => `sha256:${createHash('sha256').update(key).digest('hex')}`;
    assert.deepEqual([hash(ACME), hash(GLOBEX)], [ACME_HASH, GLOBEX_HASH]);
  });

  it('gives each consumer its own bucket, from one address', async () => {
    assert.deepEqual(await statuses(3, { 'x-api-key': ACME }), [200, 200, 429]);
    const globex = await gw.get('/api/search', { headers: { 'x-api-key': GLOBEX } });
    assert.equal(globex.status, 200);
    assert.equal(globex.headers['ratelimit-policy'], '"burst";q=2;w=20');
    assert.equal(globex.headers.ratelimit, '"burst";r=1;t=10');
  });

  it("a token whose sub is a consumer's id takes from that consumer's bucket", async () => {
    const refused = await gw.get('/api/search', { headers: { authorization: `Bearer ${await token('acme')}` } });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['x-portico-error'], 'GW_RATE_LIMITED');
    assert.equal(refused.headers['retry-after'], '10');
    assert.deepEqual(await statuses(1, { authorization: `Bearer ${await token('initech')}` }), [200]);
  });

  it('a request without credentials is refused by auth and takes no token', async () => {
    assert.equal((await gw.get('/api/search')).status, 401);
    assert.deepEqual(await statuses(1, { 'x-api-key': GLOBEX }), [200], "globex's second token is still there");
  });
});

describe("a key's consumer: its rate limit and quota over h2c and WebSocket handshakes", () => {
  let backend: TestBackend;
  let ws: WsBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    ws = await startWsBackend();
    gw = await startGateway(`
routes:
  - method: GET
    route: /search
    service: ${backend.host}
    path: /search
    protected: true
    rateLimit: { requestsPerSec: 0.1, burst: 2, key: consumer }
  - method: GET
    route: /exports
    service: ${backend.host}
    path: /exports
    protected: true
    quota: { key: consumer, day: 2 }
  - { method: GET, route: /live, service: ${ws.host}, path: /live, isWebSocket: true, protected: true, rateLimit: { requestsPerSec: 0.1, burst: 1, key: consumer } }
  - { method: GET, route: /feed, service: ${ws.host}, path: /feed, isWebSocket: true, protected: true, quota: { key: consumer, day: 1 } }
consumers:
  - { id: acme, keys: ["${ACME_HASH}"] }
  - { id: globex, keys: ["${GLOBEX_HASH}"] }
config:
  http2: { cleartext: true }
  auth:
    apiKey: { header: X-API-Key }
`);
  });
  after(() => closeAll(gw, backend, ws));

  it('h2c: each consumer has its own bucket and its own quota; refusals never reach the backend', async () => {
    const session = connect(gw.url);
    try {
      const statuses = async (path: string, key: string, n: number) => {
        const out: number[] = [];
        for (let i = 0; i < n; i++) out.push((await h2request(session, path, { 'x-api-key': key })).status);
        return out;
      };
      assert.deepEqual(await statuses('/api/search', ACME, 3), [200, 200, 429]);
      assert.deepEqual(await statuses('/api/search', GLOBEX, 1), [200]);
      assert.deepEqual(await statuses('/api/exports', ACME, 2), [200, 200]);
      const refused = await h2request(session, '/api/exports', { 'x-api-key': ACME });
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['x-portico-error'], 'GW_QUOTA_EXCEEDED');
      assert.equal(refused.headers['ratelimit-policy'], '"quota-day";q=2;w=86400');
      assert.deepEqual(await statuses('/api/exports', GLOBEX, 1), [200]);
    } finally {
      session.close();
    }
    assert.equal(backend.seen.filter((s) => s.url === '/search').length, 3);
    assert.equal(backend.seen.filter((s) => s.url === '/exports').length, 3);
  });

  it("WebSocket: a handshake takes from its key's consumer's bucket and quota, and is refused past them", async () => {
    const handshake = async (path: string, key: string) => {
      const answer = await upgradeRequest(gw.url, path, handshakeHeaders({ 'x-api-key': key }));
      if (answer.kind === 'upgrade') answer.socket.destroy();
      return answer;
    };
    for (const [path, code] of [
      ['/api/live', 'GW_RATE_LIMITED'],
      ['/api/feed', 'GW_QUOTA_EXCEEDED'],
    ] as const) {
      assert.equal((await handshake(path, ACME)).status, 101, path);
      const refused = await handshake(path, ACME);
      assert.equal(refused.kind, 'response', path);
      assert.equal(refused.status, 429, path);
      assert.equal(refused.headers['x-portico-error'], code);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal((await handshake(path, GLOBEX)).status, 101, `${path}: another consumer`);
    }
    assert.equal(ws.upgrades.length, 4, 'refused handshakes never reach the backend');
  });
});
