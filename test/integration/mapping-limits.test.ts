/**
 * Response mapping under load and abuse (docs/design-decisions.md "Response mapping" and
 * "Circuit breaker"): calls queued in the gateway's own connection pool are not backend failures,
 * one response cannot flood an origin's queue, the enrichment output and the number of distinct
 * calls per response are bounded, and an exception while enriching still returns the primary.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { get } from '../support/http.js';
import { MAX_MAPPING_CALLS_PER_RESPONSE } from '../../src/mapping/plan.js';
import { postsWithAuthors } from '../support/posts-route.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A primary backend answering every request with `body()` as JSON text. */
async function startPrimary(body: () => string): Promise<TestBackend> {
  const b = await startBackend((_req, res) => {
    const text = body();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  cleanups.push(() => b.close());
  return b;
}

async function started(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestBackend> {
  const b = await startBackend(handler);
  cleanups.push(() => b.close());
  return b;
}

async function gateway(yaml: string): Promise<TestGateway> {
  const gw = await startGateway(yaml);
  cleanups.push(() => gw.close());
  return gw;
}

/** A gateway with the shared /posts route alone, and `config` (a `config:` section) when given. */
const postsGateway = (posts: TestBackend, users: TestBackend, config = ''): Promise<TestGateway> =>
  gateway(`
routes:
${postsWithAuthors(posts, users)}
${config}`);

const items = (n: number) => `[${Array.from({ length: n }, (_, i) => `{"id":${i},"authorId":"a${i}"}`).join(',')}]`;

describe('mapping: calls waiting for a connection (2 per origin, 400 ms service, mappingSec 0.5)', () => {
  it(
    '20 distinct authors all arrive; queue time is no timeout and no circuit failure; the next request is enriched too',
    { timeout: 30_000 },
    async () => {
      let count = 20;
      const posts = await startPrimary(() => items(count));
      let inFlight = 0;
      let maxInFlight = 0;
      const users = await started((req, res) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        setTimeout(() => {
          inFlight--;
          json(res, 200, { url: req.url });
        }, 400);
      });
      const gw = await postsGateway(
        posts,
        users,
        `config:
  limits:
    connectionsPerOrigin: 2
  timeouts:
    mappingSec: 0.5
  circuitBreaker:
    enabled: true
    maxFailures: 3
    timeoutSec: 30
`,
      );
      const first = await get(`${gw.url}/api/posts`);
      assert.equal(first.status, 200);
      const authors = (t: string) => (JSON.parse(t) as { author?: { url: string } }[]).map((i) => i.author?.url);
      assert.deepEqual(
        authors(first.text),
        Array.from({ length: 20 }, (_, i) => `/users/a${i}`),
      );
      assert.equal(users.seen.length, 20);
      assert.equal(maxInFlight, 2);
      assert.equal(gw.logs.filter((l) => l.msg === 'mapping failed').length, 0);
      assert.deepEqual(
        gw.gateway.circuits.snapshot().find((c) => c.origin === users.url),
        { origin: users.url, state: 'closed', consecutiveFailures: 0 },
      );

      count = 3;
      const next = await get(`${gw.url}/api/posts`);
      assert.deepEqual(authors(next.text), ['/users/a0', '/users/a1', '/users/a2']);
      assert.equal(users.seen.length, 23);
    },
  );

  it(
    'one response does not flood the origin queue: a request to the same origin meanwhile waits for one free connection, not for all 20 calls',
    { timeout: 30_000 },
    async () => {
      const posts = await startPrimary(() => items(20));
      let arrivedFirst: () => void = () => undefined;
      const firstArrived = new Promise<void>((resolve) => (arrivedFirst = resolve));
      const users = await started((req, res) => {
        arrivedFirst();
        setTimeout(() => json(res, 200, { url: req.url }), 400);
      });
      const gw = await gateway(`
routes:
${postsWithAuthors(posts, users)}
  - { method: GET, route: /users/direct, service: ${users.host}, path: /users/direct }
config:
  limits:
    connectionsPerOrigin: 2
`);
      const mapped = get(`${gw.url}/api/posts`);
      await firstArrived;
      const t0 = performance.now();
      const direct = await get(`${gw.url}/api/users/direct`);
      const directMs = performance.now() - t0;
      assert.equal(direct.status, 200);
      assert.equal(direct.text, '{"url":"/users/direct"}');
      // Without a per-response cap it would queue behind 18 calls: 9 rounds of 400 ms.
      assert.ok(directMs < 2_000, `the direct request took ${Math.round(directMs)} ms`);
      const m = await mapped;
      assert.equal(m.status, 200);
      assert.equal((JSON.parse(m.text) as { author?: unknown }[]).filter((i) => i.author !== undefined).length, 20);
      assert.equal(users.seen.length, 21);
    },
  );
});

describe('mapping: bounded output', () => {
  it('a large tag copied into many items past 2 x maxMappingBodyBytes: the primary body is returned unchanged, logged with the request id', async () => {
    const body = `[${Array.from({ length: 100 }, (_, i) => `{"id":${i},"authorId":"same"}`).join(',')}]`;
    const posts = await startPrimary(() => body);
    const big = { blob: 'x'.repeat(5_000) };
    const users = await started((_req, res) => json(res, 200, big));
    const gw = await postsGateway(
      posts,
      users,
      `config:
  limits:
    maxMappingBodyBytes: 10000
`,
    );
    const res = await get(`${gw.url}/api/posts`, { headers: { 'x-request-id': 'rid-big' } });
    assert.equal(res.status, 200);
    assert.equal(res.text, body);
    assert.equal(res.headers['content-length'], String(body.length));
    assert.equal(users.seen.length, 1);
    const line = gw.logs.find((l) => l.msg === 'mapping output over its limit; primary body returned unchanged');
    assert.deepEqual(
      { level: line?.level, reqId: line?.reqId, route: line?.route, limit: line?.limit, bytes: line?.bytes },
      {
        level: 40,
        reqId: 'rid-big',
        route: 'GET /posts',
        limit: 20_000,
        bytes: body.length + 100 * (JSON.stringify(big).length + ',"author":'.length),
      },
    );

    // Two items fit: enriched as usual.
    const small = '[{"authorId":"same"},{"authorId":"same"}]';
    const fits = await startPrimary(() => small);
    gw.reload(`
routes:
${postsWithAuthors(fits, users)}
config:
  limits:
    maxMappingBodyBytes: 10000
`);
    const ok = await get(`${gw.url}/api/posts`);
    const tag = JSON.stringify(big);
    assert.equal(ok.text, `[{"authorId":"same","author":${tag}},{"authorId":"same","author":${tag}}]`);
  });

  it(
    `at most ${MAX_MAPPING_CALLS_PER_RESPONSE} distinct calls per response: the extra (item, rule) pairs are skipped and logged`,
    { timeout: 30_000 },
    async () => {
      const n = MAX_MAPPING_CALLS_PER_RESPONSE + 5;
      // The last item reuses the first URL: still tagged, the cap counts distinct URLs.
      const body = `[${Array.from({ length: n }, (_, i) => `{"u":${i}}`).join(',')},{"u":0}]`;
      const posts = await startPrimary(() => body);
      const users = await started((req, res) => json(res, 200, req.url!.slice(3)));
      const gw = await gateway(`
routes:
  - { method: GET, route: /posts, service: ${posts.host}, path: /posts,
      mapping: [{ path: "/u/{u}", service: ${users.host}, tag: t }] }
`);
      const res = await get(`${gw.url}/api/posts`, { headers: { 'x-request-id': 'rid-many' } });
      assert.equal(res.status, 200);
      const out = JSON.parse(res.text) as { u: number; t?: string }[];
      assert.equal(out.length, n + 1);
      assert.deepEqual(
        out.map((i) => i.t),
        [...Array.from({ length: n }, (_, i) => (i < MAX_MAPPING_CALLS_PER_RESPONSE ? String(i) : undefined)), '0'],
      );
      assert.equal(users.seen.length, MAX_MAPPING_CALLS_PER_RESPONSE);
      const line = gw.logs.find(
        (l) => l.msg === 'mapping calls over the per-response limit; extra (item, rule) pairs skipped',
      );
      assert.deepEqual(
        { level: line?.level, reqId: line?.reqId, route: line?.route, limit: line?.limit, skipped: line?.skipped },
        { level: 40, reqId: 'rid-many', route: 'GET /posts', limit: MAX_MAPPING_CALLS_PER_RESPONSE, skipped: 5 },
      );
    },
  );
});

describe('mapping: an exception while enriching (the primary response is always returned)', () => {
  it('a placeholder value that cannot be put in a URL (lone surrogate): 200 with the primary body unchanged, logged with request id and route', async () => {
    const body = '[{"authorId":"\\ud800"},{"authorId":"1"}]';
    const posts = await startPrimary(() => body);
    const users = await started((req, res) => json(res, 200, { url: req.url }));
    const gw = await postsGateway(posts, users);
    const res = await get(`${gw.url}/api/posts`, { headers: { 'x-request-id': 'rid-throw' } });
    assert.equal(res.status, 200);
    assert.equal(res.text, body);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['x-portico-error'], undefined);
    const line = gw.logs.find((l) => l.msg === 'mapping failed with an error; primary body returned unchanged');
    assert.deepEqual(
      {
        level: line?.level,
        reqId: line?.reqId,
        route: line?.route,
        err: (line?.err as { type?: string } | undefined)?.type,
      },
      { level: 50, reqId: 'rid-throw', route: 'GET /posts', err: 'URIError' },
    );
  });
});
