/**
 * The admin listener over real sockets (docs/dashboard.md): off by default and then absent from
 * the bus; the JSON API (routes, backends, traffic, errors); never served on the public port; the
 * Host check without a token; the token gate (bearer, login form cookie, sign-out, rotation by
 * reload); the live feed; named upstream targets, open streams and the mapping cache; the reload
 * history; the config rules; and closing with the gateway.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { adminRequest, openFeed } from '../support/admin.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { request, type ClientRequest } from 'node:http';
import { reloadFromFile } from '../../src/ops/reload.js';
import { formatProblem, loadConfigText } from '../../src/index.js';
import type { StatusDocument } from '../../src/admin/types.js';
import { closeAll } from '../support/close-all.js';

const TOKEN = 'an-admin-token-of-some-length';

/** Routes on `ok` (answers 200) and `failing` (answers 500 while `failing.on`). */
function routes(ok: TestBackend, failing: TestBackend): string {
  return `
routes:
  - { method: GET, route: "/users/{id}", service: ${ok.host}, path: "/users/{id}" }
  - { method: GET, route: /orders, service: ${failing.host}, path: /orders }
  - { method: GET, route: /limited, service: ${ok.host}, path: /limited,
      rateLimit: { requestsPerSec: 0.01, burst: 1 } }
`;
}

/** Polls the status document until `test` holds (seconds are counted once complete). */
async function statusWhen(gw: TestGateway, test: (doc: StatusDocument) => boolean, what: string) {
  let doc = await status(gw);
  const deadline = performance.now() + 3_000;
  while (!test(doc)) {
    if (performance.now() > deadline) throw new Error(`${what}: not in the status within 3 s`);
    await sleep(50);
    doc = await status(gw);
  }
  return doc;
}

/** A GET on the public port left open (an SSE stream), resolved once its answer's head arrived. */
function openFeedLike(port: number, path: string): Promise<ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      resolve(req);
    });
    req.on('error', reject);
    req.end();
  });
}

const adminPort = (gw: TestGateway) => gw.gateway.adminAddress()!.port;
const status = async (gw: TestGateway, headers: Record<string, string> = {}) =>
  (await adminRequest(adminPort(gw), '/api/status', { headers })).json() as StatusDocument;

describe('admin listener', () => {
  let ok: TestBackend;
  let failing: TestBackend;
  const failure = { on: false };
  before(async () => {
    ok = await startBackend((req, res) => json(res, 200, { url: req.url }));
    failing = await startBackend((_req, res) => json(res, failure.on ? 500 : 200, { failing: failure.on }));
  });
  after(() => closeAll(ok, failing));

  describe('off (no config.admin)', () => {
    it('has no listener, and nothing of it subscribes to the bus', async () => {
      const gw = await startGateway(`${routes(ok, failing)}config:\n  telemetry:\n    metrics: false\n`);
      try {
        assert.equal(gw.gateway.adminAddress(), undefined);
        // Only the dashboard and metrics read these; with both off, emitting them costs one length check.
        for (const name of ['upstream:response', 'stream:open', 'stream:close'] as const)
          assert.equal(gw.gateway.events.has(name), false, name);
      } finally {
        await gw.close();
      }
      const on = await startGateway(
        `${routes(ok, failing)}config:\n  telemetry:\n    metrics: false\n  admin:\n    port: 0\n`,
      );
      try {
        for (const name of ['upstream:response', 'stream:open', 'stream:close'] as const)
          assert.equal(on.gateway.events.has(name), true, name);
      } finally {
        await on.close();
      }
    });
  });

  describe('without a token', () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startGateway(
        `${routes(ok, failing)}config:\n  circuitBreaker:\n    enabled: true\n  admin:\n    port: 0\n`,
      );
    });
    after(() => gw.close());

    it('listens on 127.0.0.1 by default, apart from the public port', () => {
      const address = gw.gateway.adminAddress()!;
      assert.equal(address.address, '127.0.0.1');
      assert.notEqual(address.port, gw.port);
    });

    it('describes every route, its backend and auth, and every backend with its circuit', async () => {
      const doc = await status(gw);
      assert.deepEqual(
        doc.routes.map((r) => [r.id, r.methods, r.path, r.auth, r.kind, r.stream]),
        [
          ['GET /users/{id}', 'GET,HEAD', '/api/users/{id}', 'public', 'standard', null],
          ['GET /orders', 'GET,HEAD', '/api/orders', 'public', 'standard', null],
          ['GET /limited', 'GET,HEAD', '/api/limited', 'public', 'standard', null],
        ],
      );
      assert.equal(doc.routes[0]!.backend, `${ok.url}/users/{id}`);
      assert.deepEqual(
        doc.backends.map((b) => [b.origin, b.circuit.state, b.routes]),
        [
          [ok.url, 'closed', ['GET /users/{id}', 'GET /limited']],
          [failing.url, 'closed', ['GET /orders']],
        ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      );
      assert.equal(doc.gateway.configFile, 'test.yaml');
      assert.equal(doc.circuitBreaker.enabled, true);
      assert.equal(doc.rateLimit.enabled, true);
    });

    it('counts traffic per route, rate-limit refusals, and lists errors with their request id', async () => {
      for (let i = 0; i < 4; i++) assert.equal((await gw.get(`/api/users/${i}`)).status, 200);
      assert.equal((await gw.get('/api/limited')).status, 200);
      const refused = await gw.get('/api/limited', { headers: { 'x-request-id': 'limited-1' } });
      assert.equal(refused.status, 429);
      assert.equal((await gw.get('/api/nowhere', { headers: { 'x-request-id': 'lost-1' } })).status, 404);
      // A second is counted once it is complete, and these requests may span two.
      const doc = await statusWhen(
        gw,
        (d) => d.traffic.lastMinute.requests >= 7 && d.routes[0]!.lastMinute.requests === 4,
        'the seven requests',
      );
      const users = doc.routes[0]!.lastMinute;
      assert.equal(users.requests, 4);
      assert.equal(users.statuses['2xx'], 4);
      assert.ok(users.p50Ms !== null && users.p99Ms !== null && users.p50Ms <= users.p99Ms);
      assert.equal(doc.routes[2]!.lastMinute.rateLimited, 1);
      assert.equal(doc.rateLimit.rejectedTotal, 1);
      assert.ok(doc.traffic.lastMinute.requests >= 7);
      const codes = doc.errors.map((e) => [e.requestId, e.status, e.code, e.path]);
      assert.deepEqual(codes.slice(0, 2), [
        ['lost-1', 404, 'GW_ROUTE_NOT_FOUND', '/api/nowhere'],
        ['limited-1', 429, 'GW_RATE_LIMITED', '/api/limited'],
      ]);
      const calls = doc.backends.find((b) => b.origin === ok.url)!.lastMinute;
      assert.equal(calls.calls, 5);
    });

    it('is never served on the public port', async () => {
      for (const path of ['/api/status', '/api/feed', '/assets/dashboard.js', '/', '/login'])
        assert.equal((await gw.get(path)).status, 404, path);
    });

    it('serves the page and its files, gzipped when asked, with a strict content security policy', async () => {
      const page = await adminRequest(adminPort(gw), '/');
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(page.text, /<title>Portico status<\/title>/);
      assert.doesNotMatch(page.text, /logout/);
      assert.match(String(page.headers['content-security-policy']), /default-src 'none'; script-src 'self'/);
      const script = await adminRequest(adminPort(gw), '/assets/dashboard.js', {
        headers: { 'accept-encoding': 'gzip' },
      });
      assert.equal(script.headers['content-encoding'], 'gzip');
      const again = await adminRequest(adminPort(gw), '/assets/dashboard.js', {
        headers: { 'if-none-match': String(script.headers.etag) },
      });
      assert.equal(again.status, 304);
    });

    it('answers only to an IP address or localhost, against DNS rebinding', async () => {
      const port = adminPort(gw);
      const refused = await adminRequest(port, '/api/status', { headers: { host: `rebound.example:${port}` } });
      assert.equal(refused.status, 403);
      assert.equal(refused.headers['x-portico-error'], 'GW_ADMIN_HOST_NOT_ALLOWED');
      assert.equal((await adminRequest(port, '/api/status', { headers: { host: `localhost:${port}` } })).status, 200);
      assert.equal((await adminRequest(port, '/api/status', { headers: { host: `[::1]:${port}` } })).status, 200);
    });

    it('answers 404 and 405 in the gateway error shape', async () => {
      const missing = await adminRequest(adminPort(gw), '/api/nothing');
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.json(), { error: 'No route matches this path', success: false });
      const wrong = await adminRequest(adminPort(gw), '/api/status', { method: 'POST' });
      assert.equal(wrong.status, 405);
      assert.equal(wrong.headers.allow, 'GET, HEAD');
    });

    it('feeds a status and the series, then both every second; an open circuit shows within 2 s', async () => {
      const feed = await openFeed(adminPort(gw));
      try {
        assert.equal(feed.status, 200);
        assert.match(String(feed.headers['content-type']), /^text\/event-stream/);
        const series = (await feed.next((e) => e.event === 'series')).data as { points: unknown[] };
        assert.equal(series.points.length, 300);
        await feed.next((e) => e.event === 'status');
        failure.on = true;
        // Five failures in a row open the circuit (circuitBreaker.maxFailures, default 5).
        for (let i = 0; i < 5; i++) assert.equal((await gw.get('/api/orders')).status, 500);
        const opened = performance.now();
        const open = await feed.next(
          (e) =>
            e.event === 'status' &&
            (e.data as StatusDocument).backends.some((b) => b.origin === failing.url && b.circuit.state === 'open'),
          2_000,
        );
        assert.ok(performance.now() - opened < 2_000);
        const card = (open.data as StatusDocument).backends.find((b) => b.origin === failing.url)!;
        assert.equal(card.circuit.consecutiveFailures, 5);
        const point = (await feed.next((e) => e.event === 'point' && (e.data as { requests: number }).requests > 0))
          .data as { t: number; requests: number; errors: number };
        assert.ok(point.t > 0);
      } finally {
        failure.on = false;
        feed.close();
      }
    });
  });

  describe('with a token', () => {
    let gw: TestGateway;
    let dir: string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'portico-admin-'));
      gw = await startGateway(`${routes(ok, failing)}config:\n  admin:\n    port: 0\n    token: \${ADMIN_TOKEN}\n`, {
        ...process.env,
        ADMIN_TOKEN: TOKEN,
      });
    });
    after(async () => {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('refuses the API without the token, or with a wrong one, and accepts the bearer token', async () => {
      const port = adminPort(gw);
      const attempts: Record<string, string>[] = [
        {},
        { authorization: 'Bearer wrong-token-wrong-token' },
        { authorization: TOKEN },
      ];
      for (const headers of attempts) {
        const r = await adminRequest(port, '/api/status', { headers });
        assert.equal(r.status, 401, JSON.stringify(headers));
        assert.equal(r.headers['x-portico-error'], 'GW_ADMIN_UNAUTHORIZED');
        assert.equal(r.headers['www-authenticate'], 'Bearer realm="portico-admin"');
      }
      const feed = await adminRequest(port, '/api/feed');
      assert.equal(feed.status, 401);
      const r = await adminRequest(port, '/api/status', { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(r.status, 200);
      // With a token, any Host may ask: the token is what guards it.
      const named = await adminRequest(port, '/api/status', { headers: { host: 'status.example' } });
      assert.equal(named.status, 401);
    });

    it('shows the login form; a right token sets an HttpOnly, SameSite cookie that opens the API', async () => {
      const port = adminPort(gw);
      const form = await adminRequest(port, '/');
      assert.equal(form.status, 401);
      assert.match(form.text, /<label for="token">Admin token<\/label>/);
      const form2 = { 'content-type': 'application/x-www-form-urlencoded' };
      const wrong = await adminRequest(port, '/login', { method: 'POST', headers: form2, body: 'token=nope' });
      assert.equal(wrong.status, 401);
      assert.match(wrong.text, /role="alert"/);
      assert.equal(wrong.headers['set-cookie'], undefined);
      const right = await adminRequest(port, '/login', {
        method: 'POST',
        headers: form2,
        body: `token=${encodeURIComponent(TOKEN)}`,
      });
      assert.equal(right.status, 303);
      assert.equal(right.headers.location, '/');
      const setCookie = right.headers['set-cookie']![0]!;
      assert.match(
        setCookie,
        /^portico_admin=\d+\.[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200$/,
      );
      assert.ok(!setCookie.includes(TOKEN), 'the cookie never holds the token');
      const cookie = setCookie.split(';')[0]!;
      assert.equal((await adminRequest(port, '/api/status', { headers: { cookie } })).status, 200);
      const page = await adminRequest(port, '/', { headers: { cookie } });
      assert.equal(page.status, 200);
      assert.match(page.text, /action="\/logout"/);
      const forged = cookie.replace(/\.(.)/, (_m, c: string) => `.${c === 'A' ? 'B' : 'A'}`);
      assert.equal((await adminRequest(port, '/api/status', { headers: { cookie: forged } })).status, 401);
      const later = cookie.replace(/=(\d+)\./, (_m, n: string) => `=${Number(n) + 1000}.`);
      assert.equal((await adminRequest(port, '/api/status', { headers: { cookie: later } })).status, 401);
      const out = await adminRequest(port, '/logout', { method: 'POST', headers: { cookie } });
      assert.equal(out.status, 303);
      assert.match(out.headers['set-cookie']![0]!, /^portico_admin=; .*Max-Age=0$/);
    });

    it('a reload with a new token signs sessions out, and keeps its host and port with a warning', async () => {
      const port = adminPort(gw);
      const login = await adminRequest(port, '/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${TOKEN}`,
      });
      const cookie = login.headers['set-cookie']![0]!.split(';')[0]!;
      const file = join(dir, 'gateway.yaml');
      writeFileSync(
        file,
        `${routes(ok, failing)}config:\n  admin:\n    port: 1\n    token: another-admin-token-0123\n`,
      );
      assert.equal(await reloadFromFile(gw.gateway, file, process.env, 'test'), true);
      assert.equal(gw.gateway.adminAddress()!.port, port);
      assert.ok(
        gw.logs.some((l) =>
          String(l.msg).startsWith('config.admin host or port changed: it applies at the next start'),
        ),
      );
      assert.equal((await adminRequest(port, '/api/status', { headers: { cookie } })).status, 401);
      const bearer = { authorization: 'Bearer another-admin-token-0123' };
      const doc = (await adminRequest(port, '/api/status', { headers: bearer })).json() as StatusDocument;
      assert.equal(doc.gateway.configFile, file);
      assert.deepEqual(
        doc.reloads.history.map((r) => [r.ok, r.file]),
        [[true, file]],
      );
      writeFileSync(
        file,
        `${routes(ok, failing)}  - method: GET\n    route: /broken\nconfig:\n  admin:\n    port: 0\n`,
      );
      assert.equal(await reloadFromFile(gw.gateway, file, process.env, 'test'), false);
      const after = (await adminRequest(port, '/api/status', { headers: bearer })).json() as StatusDocument;
      assert.equal(after.reloads.last!.ok, false);
      assert.match(after.reloads.last!.problems!.join('\n'), /gateway\.yaml:\d+:\d+: /);
      assert.equal(after.reloads.history.length, 2);
    });
  });

  it('shows named upstream targets and their health, open SSE streams, and the mapping cache', async () => {
    const dead = await closedPort();
    const events = await startBackend((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
    });
    const posts = await startBackend((req, res) =>
      req.url === '/posts' ? json(res, 200, [{ id: 1, authorId: 7 }]) : json(res, 200, { id: 7 }),
    );
    const gw = await startGateway(`
upstreams:
  users:
    targets: [${ok.host}, 127.0.0.1:${dead}]
    balance: round-robin
    outlierDetection:
      consecutiveFailures: 1
routes:
  - { method: GET, route: "/users/{id}", service: users, path: "/users/{id}" }
  - { method: GET, route: /events, service: ${events.host}, path: /events, isSSE: true }
  - { method: GET, route: /posts, service: ${posts.host}, path: /posts,
      mapping: [{ path: "/users/{authorId}", service: ${posts.host}, tag: author }] }
config:
  mappingCache:
    enabled: true
  admin:
    port: 0
`);
    const stream = await openFeedLike(gw.port, '/api/events');
    try {
      for (let i = 0; i < 4; i++) assert.equal((await gw.get(`/api/users/${i}`)).status, 200);
      for (let i = 0; i < 2; i++) assert.equal((await gw.get('/api/posts')).status, 200);
      const doc = await statusWhen(
        gw,
        (d) => d.streams.sse === 1 && d.backends.some((b) => b.targets?.some((t) => t.ejected)),
        'an open stream and an ejected target',
      );
      const users = doc.backends.find((b) => b.origin === 'users')!;
      assert.deepEqual(
        users.targets!.map((t) => [t.target, t.ejected]),
        [
          [ok.host, false],
          [`127.0.0.1:${dead}`, true],
        ].map(([target, ejected]) => [`http://${String(target)}`, ejected]),
      );
      assert.deepEqual(users.routes, ['GET /users/{id}']);
      assert.equal(doc.routes.find((r) => r.id === 'GET /events')!.stream, 'sse');
      assert.equal(doc.routes.find((r) => r.id === 'GET /events')!.openStreams, 1);
      assert.deepEqual(doc.routes.find((r) => r.id === 'GET /posts')!.mapping, ['author']);
      assert.deepEqual([doc.mappingCache.enabled, doc.mappingCache.hits, doc.mappingCache.misses], [true, 1, 1]);
      assert.equal(doc.mappingCache.hitRatio, 0.5);
    } finally {
      stream.destroy();
      await gw.close();
      await events.close();
      await posts.close();
    }
  });

  it('closes with the gateway, ending the feed', async () => {
    const gw = await startGateway(`${routes(ok, failing)}config:\n  admin:\n    port: 0\n`);
    const port = adminPort(gw);
    const feed = await openFeed(port);
    await feed.next((e) => e.event === 'status');
    await gw.close();
    await feed.ended;
    await assert.rejects(adminRequest(port, '/api/status'), /ECONNREFUSED/);
  });

  describe('config rules', () => {
    const load = (settings: string) => loadConfigText(`${routes(ok, failing)}config:\n${settings}`, 'gw.yaml', {});

    it('refuses an admin port shared with the public or the redirect listener', () => {
      const same = load('  port: 9000\n  admin:\n    port: 9000\n');
      assert.equal(same.ok, false);
      assert.match(
        (same.ok ? [] : same.problems.map(formatProblem)).join('\n'),
        /gw\.yaml:\d+:\d+: config\.admin\.port: 9000 is the public port \(config\.port\); the admin listener needs a port of its own/,
      );
      const defaultPort = load('  admin:\n    port: 8080\n');
      assert.equal(defaultPort.ok, false);
    });

    it('warns about an admin listener open to other machines without a token', () => {
      const open = load('  admin:\n    port: 9901\n    host: 0.0.0.0\n');
      assert.equal(open.ok, true);
      assert.match(
        (open.ok ? open.notices.map(formatProblem) : []).join('\n'),
        /warning: config\.admin\.host: 0\.0\.0\.0 lets other machines read the status page without a token/,
      );
      const guarded = load(`  admin:\n    port: 9901\n    host: 0.0.0.0\n    token: ${TOKEN}\n`);
      assert.deepEqual(guarded.ok ? guarded.notices : ['invalid'], []);
    });

    it('refuses a short token, an unknown key, and a missing port', () => {
      const bad = load('  admin:\n    host: 127.0.0.1\n    token: short\n    prot: 1\n');
      assert.equal(bad.ok, false);
      const text = (bad.ok ? [] : bad.problems.map(formatProblem)).join('\n');
      assert.match(text, /token/);
      assert.match(text, /prot/);
      assert.match(text, /port/);
    });
  });
});
