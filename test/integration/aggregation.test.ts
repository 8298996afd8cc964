/**
 * Aggregated routes (`backends:`) end to end with real local backends: three answers shaped by
 * group, target, allow, deny and rename into one exact JSON body; a failing backend gives the
 * partial header with a 200, logged and counted; all failing gives 502 JSON; claim headers, header
 * rules and the client's query reach every backend; each backend answers to its own circuit;
 * mapping rules apply to the merged object. `portico check` refuses bad aggregations.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { request } from 'undici';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/wait-for.js';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';

const SECRET = 'aggregation-test-secret-0123456789abcdef';

describe('aggregated routes', () => {
  let users: TestBackend;
  let orders: TestBackend;
  let prefs: TestBackend;
  let flaky: TestBackend;
  let gw: TestGateway;
  let down: number;
  const flakyStatus = 500;
  before(async () => {
    users = await startBackend((req, res) => {
      // Raw text: an id past 2^53 that JSON.stringify could not write.
      const body =
        '{"id":12345678901234567890,"name":"Ann","passwordHash":"x","address":{"city":"Porto","zip":"4000"}}';
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
      res.end(body);
    });
    orders = await startBackend((req, res) =>
      json(res, 200, { data: { items: [{ id: 1, total: 9.5, internal: true }], count: 1 }, page: 1 }),
    );
    prefs = await startBackend((req, res) => json(res, 200, { theme: 'dark', lang: 'pt', name: 'from prefs' }));
    flaky = await startBackend((req, res) => json(res, flakyStatus, { ok: flakyStatus < 300 }));
    down = await closedPort();
    gw = await startGateway(`
config:
  auth:
    secret: ${SECRET}
  circuitBreaker:
    enabled: true
    maxFailures: 2
    timeoutSec: 60
routes:
  - method: GET
    route: /profile/{id}
    protected: true
    backends:
      - service: ${users.host}
        path: /users/{id}
        deny: [passwordHash, address.zip]
        rename: { name: fullName }
      - service: ${orders.host}
        path: /orders?user={id}
        target: data
        allow: [items.id, items.total, count]
        group: orders
      - service: ${prefs.host}
        path: /prefs/{id}
        allow: [theme]
    headers:
      request:
        set: { X-Caller: "{claims.sub}" }
  - method: GET
    route: /partial
    public: true
    backends:
      - service: ${prefs.host}
        path: /prefs/1
      - service: 127.0.0.1:${down}
        path: /nothing
        group: missing
  - { method: GET, route: /none, public: true,
      backends: [{ service: 127.0.0.1:${down}, path: /a }, { service: ${flaky.host}, path: /b, group: b }] }
  - method: GET
    route: /mapped
    public: true
    backends:
      - service: ${users.host}
        path: /users/7
        deny: [address]
      - service: ${prefs.host}
        path: /prefs/7
        group: prefs
    mapping:
      - path: /orders?user={id}
        service: ${orders.host}
        tag: orders
    response:
      deny: [passwordHash, orders.page]
`);
  });
  after(async () => {
    await gw.close();
    for (const b of [users, orders, prefs, flaky]) await b.close();
  });

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await request(`${gw.url}/api${path}`, { headers });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  };
  const logLine = async (pick: (l: Record<string, unknown>) => boolean) => {
    await waitFor(() => gw.logs.some(pick), 5_000, 'the log line');
    return gw.logs.find(pick)!;
  };
  const token = () =>
    new SignJWT({ sub: 'u-1' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(SECRET));

  it('merges three answers shaped by group, target, allow, deny and rename into one exact body', async () => {
    const r = await get('/profile/42?lang=en', { authorization: `Bearer ${await token()}` });
    assert.equal(r.status, 200);
    assert.equal(
      r.text,
      '{"id":12345678901234567890,"fullName":"Ann","address":{"city":"Porto"},"orders":{"items":[{"id":1,"total":9.5}],"count":1},"theme":"dark"}',
    );
    assert.equal(r.headers['x-portico-completed'], 'true');
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(r.headers['content-length'], String(Buffer.byteLength(r.text)));
    // Every backend got the path, the client's query, the claims and the route's header rules.
    assert.equal(users.seen.at(-1)?.url, '/users/42?lang=en');
    assert.equal(orders.seen.at(-1)?.url, '/orders?user=42&lang=en');
    for (const b of [users, orders, prefs]) {
      const seen = b.seen.at(-1)!;
      assert.equal(seen.headers['x-sub'], 'u-1');
      assert.equal(seen.headers['x-caller'], 'u-1');
      assert.equal(seen.headers['accept-encoding'], 'identity');
      assert.equal(seen.headers['x-request-id'], r.headers['x-request-id']);
    }
  });

  it('needs a valid token on a protected aggregated route: no backend is called without one', async () => {
    const before = users.seen.length;
    const r = await get('/profile/42');
    assert.equal(r.status, 401);
    assert.equal(users.seen.length, before);
  });

  it('one backend failing: 200 with what came, X-Portico-Completed: false, a log line and a metric', async () => {
    const r = await get('/partial');
    assert.equal(r.status, 200);
    assert.equal(r.text, '{"theme":"dark","lang":"pt","name":"from prefs"}');
    assert.equal(r.headers['x-portico-completed'], 'false');
    const line = await logLine((l) => l.msg === 'aggregation incomplete' && l.reqId === r.headers['x-request-id']);
    assert.deepEqual(line.failed, [{ backend: 1, service: `127.0.0.1:${down}`, reason: 'refused' }]);
    const metrics = await (await request(`${gw.url}/metrics`)).body.text();
    assert.match(metrics, /portico_aggregate_backend_failures_total\{route="\/partial",service="127\.0\.0\.1:\d+"\} 1/);
  });

  it('every backend failing: 502 GW_AGGREGATE_FAILED', async () => {
    const r = await get('/none');
    assert.equal(r.status, 502);
    assert.equal(r.headers['x-portico-error'], 'GW_AGGREGATE_FAILED');
    assert.deepEqual(JSON.parse(r.text), { error: 'No backend of this aggregated route answered', success: false });
  });

  it('each backend answers to its own circuit: an open one is skipped without a call', async () => {
    // Two failures each (maxFailures 2) open both circuits: the closed port's and the 500's.
    await get('/none');
    const calls = flaky.seen.length;
    const r = await get('/none');
    assert.equal(r.status, 502);
    assert.equal(flaky.seen.length, calls, 'no call while the circuit is open');
    const line = await logLine(
      (l) => l.reqId === r.headers['x-request-id'] && String(l.msg).startsWith('aggregation failed'),
    );
    assert.deepEqual(
      (line.failed as { reason: string }[]).map((f) => f.reason),
      ['circuit open', 'circuit open'],
    );
  });

  it('mapping rules and field rules apply to the merged object', async () => {
    const r = await get('/mapped');
    assert.equal(r.status, 200);
    assert.equal(
      r.text,
      '{"id":12345678901234567890,"name":"Ann","prefs":{"theme":"dark","lang":"pt","name":"from prefs"},"orders":{"data":{"items":[{"id":1,"total":9.5,"internal":true}],"count":1}}}',
    );
    assert.equal(orders.seen.at(-1)?.url, '/orders?user=12345678901234567890');
  });
});

describe('portico check: aggregated routes', () => {
  const problems = (text: string) => {
    const r = loadConfigText(text, 'g.yaml', {});
    return r.ok ? [] : r.problems.map(formatProblem);
  };

  it('accepts a valid aggregation', () => {
    assert.deepEqual(
      problems(`routes:
  - method: GET
    route: /a/{id}
    backends:
      - { service: "127.0.0.1:9", path: "/x/{id}", group: x }
      - { service: "127.0.0.1:9", path: /y, target: data.items, allow: [id] }`),
      [],
    );
  });

  it('refuses service with backends, a non-GET method, unknown parameters, unused ones and shared groups', () => {
    const out = problems(`routes:
  - method: POST
    route: /a/{id}/{other}
    service: 127.0.0.1:9
    backends:
      - service: 127.0.0.1:9
        path: /x/{idd}
        group: g
      - service: 127.0.0.1:9
        path: /y/{id}
        group: g
        target: a..b
        allow: [a]
        deny: [b]`);
    assert.deepEqual(out, [
      'g.yaml:2:13: routes[0].method: an aggregated route must use GET (its backends are read, never sent a body)',
      'g.yaml:3:12: routes[0].route: {other} is used by no backend path (every parameter must reach a backend)',
      'g.yaml:4:14: routes[0].service: an aggregated route has backends instead (remove service)',
      'g.yaml:7:15: routes[0].backends[0].path: {idd} is not a parameter of route "/a/{id}/{other}" (did you mean {id}?)',
      'g.yaml:11:16: routes[0].backends[1].group: "g" is also backends[0]\'s group; each answer needs its own key',
      'g.yaml:12:17: routes[0].backends[1].target: "a..b" has an empty field name (a dot path is a.b.c)',
      'g.yaml:14:15: routes[0].backends[1]: allow and deny exclude each other; allow keeps only what it lists, so drop deny',
    ]);
  });

  it('a route without backends still needs service and path', () => {
    assert.deepEqual(
      problems(`routes:
  - method: GET
    route: /a
    path: /a`),
      ['g.yaml:2:5: routes[0]: missing required key "service"'],
    );
  });
});
