/**
 * docs/design-decisions.md "HTTP behaviour": the request id and the W3C trace context reach the
 * mapping calls and the auth service like the backend, each call with a span id of its own; and
 * those calls are counted by GET /metrics (mapping calls, upstream latency by call kind).
 * Real local backend, mapping service and auth service on 127.0.0.1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { closedPort, json, startBackend, type SeenRequest, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { get } from '../support/http.js';
import { waitFor } from '../support/wait-for.js';
import { closeAll } from '../support/close-all.js';
import { postsWithAuthors } from '../support/posts-route.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const STATE = 'congo=t61rcWkgMzE';
const SHAPE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

/** `[traceId, spanId, flags]` of the one `traceparent` a service received. */
function traceparentOf(seen: SeenRequest): [string, string, string] {
  const raw = seen.rawHeaders.filter((_, i) => i % 2 === 0 && seen.rawHeaders[i]!.toLowerCase() === 'traceparent');
  assert.equal(raw.length, 1, `one traceparent on ${seen.url}`);
  const m = SHAPE.exec(String(seen.headers.traceparent));
  assert.ok(m, `a valid traceparent on ${seen.url}: ${String(seen.headers.traceparent)}`);
  return [m[1]!, m[2]!, m[3]!];
}

/** The value of one sample line of the exposition text. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** `/posts?authors=a,b` answers one item per author: `{ id: 1, authorId: 'a' }, ...`. */
function postsBackend(): Promise<TestBackend> {
  return startBackend((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/posts') return json(res, 200, { ok: true });
    const authors = (url.searchParams.get('authors') ?? '').split(',');
    json(
      res,
      200,
      authors.map((a, i) => ({ id: i + 1, authorId: a })),
    );
  });
}

const authService = (): Promise<TestBackend> =>
  startBackend((req, res) =>
    req.headers.authorization === 'Bearer ok'
      ? json(res, 200, { userId: '42' })
      : json(res, 401, { error: 'no', success: false }),
  );

/**
 * The gateway of most suites here: GET /posts on `backend`, each item's author looked up on
 * `users`, every route behind the auth service `auth` unless public; `more` adds routes and config.
 */
function startPostsGateway(
  backend: TestBackend,
  users: TestBackend,
  auth: TestBackend,
  more: { routes?: string; config?: string },
): Promise<TestGateway> {
  return startGateway(`
routes:
${postsWithAuthors(backend, users)}
${more.routes ?? ''}
config:
  auth:
    authService: ${auth.host}
    authPath: /check
    defaultProtected: true
${more.config ?? ''}
`);
}

describe('trace context on mapping calls and the auth service', () => {
  let backend: TestBackend;
  let users: TestBackend;
  let auth: TestBackend;
  let gw: TestGateway;
  // '/users/held' answers only when released: a call that other requests can join.
  let heldArrived!: () => void;
  const arrived = new Promise<void>((r) => (heldArrived = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  before(async () => {
    backend = await postsBackend();
    users = await startBackend(async (req, res) => {
      if (req.url === '/users/held') {
        heldArrived();
        await released;
      }
      json(res, 200, { name: req.url?.slice('/users/'.length) });
    });
    auth = await authService();
    gw = await startPostsGateway(backend, users, auth, {
      routes: `  - { method: GET, route: /feed, service: ${backend.host}, path: /posts, public: true,
      mapping: [{ path: "/users/{authorId}", service: ${users.host}, tag: author }] }`,
      config: `  mappingCache:
    enabled: true`,
    });
  });
  after(async () => {
    release();
    await gw?.close();
    await backend?.close();
    await users?.close();
    await auth?.close();
  });

  it('gives the auth call, the backend call and every mapping call its own span in the client trace', async () => {
    const res = await get(`${gw.url}/api/posts?authors=1,2`, {
      headers: {
        authorization: 'Bearer ok',
        traceparent: `00-${TRACE}-${PARENT}-01`,
        tracestate: STATE,
        'x-request-id': 'rid-trace-1',
      },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.text), [
      { id: 1, authorId: '1', author: { name: '1' } },
      { id: 2, authorId: '2', author: { name: '2' } },
    ]);
    assert.equal(auth.seen.length, 1);
    assert.equal(backend.seen.length, 1);
    assert.deepEqual(users.seen.map((s) => s.url).sort(), ['/users/1', '/users/2']);
    const calls = [auth.seen[0]!, backend.seen[0]!, ...users.seen];
    const spans = calls.map((seen) => {
      const [traceId, spanId, flags] = traceparentOf(seen);
      assert.equal(traceId, TRACE, seen.url);
      assert.equal(flags, '01', seen.url);
      assert.equal(seen.headers.tracestate, STATE, seen.url);
      assert.equal(seen.headers['x-request-id'], 'rid-trace-1', seen.url);
      return spanId;
    });
    assert.equal(new Set([...spans, PARENT]).size, 5, `distinct span ids: ${spans.join(' ')}`);
  });

  it('puts all calls of a request without a traceparent in one new trace, without tracestate', async () => {
    const from = { auth: auth.seen.length, backend: backend.seen.length, users: users.seen.length };
    const res = await get(`${gw.url}/api/posts?authors=3,4`, {
      headers: { authorization: 'Bearer ok', tracestate: 'x=y' },
    });
    assert.equal(res.status, 200);
    const calls = [...auth.seen.slice(from.auth), ...backend.seen.slice(from.backend), ...users.seen.slice(from.users)];
    assert.equal(calls.length, 4);
    const parsed = calls.map(traceparentOf);
    assert.notEqual(parsed[0]![0], TRACE);
    assert.equal(new Set(parsed.map((p) => p[0])).size, 1);
    assert.equal(new Set(parsed.map((p) => p[1])).size, 4);
    for (const seen of calls) assert.equal(seen.headers.tracestate, undefined);
  });

  it('sends a shared (single-flight) mapping call with the trace of the request that started it', async () => {
    const traceA = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    const traceB = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
    const traceC = 'cccccccccccccccccccccccccccccccc';
    const coalesced = gw.gateway.mappingCache.stats().coalesced ?? 0;
    const first = get(`${gw.url}/api/feed?authors=held`, {
      headers: {
        traceparent: `00-${traceA}-${PARENT}-01`,
        'x-request-id': 'rid-a',
      },
    });
    await arrived;
    const second = get(`${gw.url}/api/feed?authors=held`, {
      headers: {
        traceparent: `00-${traceB}-${PARENT}-01`,
        'x-request-id': 'rid-b',
      },
    });
    // Nothing announces that B joined the running call: a bounded wait on the cache's counter.
    await waitFor(() => gw.gateway.mappingCache.stats().coalesced !== coalesced, 5_000, 'B joining the call');
    assert.equal(gw.gateway.mappingCache.stats().coalesced, coalesced + 1);
    release();
    const expected = [{ id: 1, authorId: 'held', author: { name: 'held' } }];
    for (const r of await Promise.all([first, second])) {
      assert.equal(r.status, 200);
      assert.deepEqual(JSON.parse(r.text), expected);
    }
    // A later request is served from the cache: no call, so no span for it.
    const third = await get(`${gw.url}/api/feed?authors=held`, {
      headers: { traceparent: `00-${traceC}-${PARENT}-01` },
    });
    assert.deepEqual(JSON.parse(third.text), expected);
    const held = users.seen.filter((s) => s.url === '/users/held');
    assert.equal(held.length, 1);
    assert.equal(traceparentOf(held[0]!)[0], traceA);
    assert.equal(held[0]!.headers['x-request-id'], 'rid-a');
    // Each primary request still carries its own trace to the backend.
    assert.deepEqual(
      backend.seen.slice(-3).map((s) => traceparentOf(s)[0]),
      [traceA, traceB, traceC],
    );
  });
});

describe('trace context on mapping and auth calls with propagation off', () => {
  let backend: TestBackend;
  let users: TestBackend;
  let auth: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await postsBackend();
    users = await startBackend((req, res) => json(res, 200, { name: req.url }));
    auth = await authService();
    gw = await startPostsGateway(backend, users, auth, { config: '  telemetry: { propagation: false }' });
  });
  after(() => closeAll(gw, backend, users, auth));

  it('adds no traceparent to mapping and auth calls, and relays the client one to the backend unchanged', async () => {
    const client = `00-${TRACE}-${PARENT}-01`;
    const res = await get(`${gw.url}/api/posts?authors=1`, {
      headers: {
        authorization: 'Bearer ok',
        traceparent: client,
        tracestate: STATE,
      },
    });
    assert.equal(res.status, 200);
    assert.equal(users.seen.length, 1);
    assert.equal(auth.seen.length, 1);
    for (const seen of [users.seen[0]!, auth.seen[0]!]) {
      assert.equal(seen.headers.traceparent, undefined);
      assert.equal(seen.headers.tracestate, undefined);
    }
    assert.equal(backend.seen[0]!.headers.traceparent, client);
    assert.equal(backend.seen[0]!.headers.tracestate, STATE);
  });
});

describe('metrics of mapping and auth-service calls', () => {
  let backend: TestBackend;
  let users: TestBackend;
  let auth: TestBackend;
  let gw: TestGateway;
  let dead: number;
  before(async () => {
    backend = await postsBackend();
    users = await startBackend((req, res) =>
      req.url === '/users/gone' ? json(res, 404, { error: 'gone' }) : json(res, 200, { name: req.url }),
    );
    auth = await authService();
    dead = await closedPort();
    gw = await startGateway(`
routes:
  - { method: GET, route: /posts, service: ${backend.host}, path: /posts, public: true,
      mapping: [
        { path: "/users/{authorId}", service: ${users.host}, tag: author },
        { path: "/extra/{id}", service: 127.0.0.1:${dead}, tag: extra }] }
  - { method: GET, route: /orders, service: ${backend.host}, path: /orders }
config:
  auth:
    authService: ${auth.host}
    authPath: /check
    defaultProtected: true
`);
    // 2 + 1 (two items, one author) + 1 (answered 404) = 4 answered mapping calls to users;
    // 2 + 2 + 1 calls to the dead origin, none answered.
    for (const authors of ['1,2', '3,3', 'gone'])
      assert.equal((await get(`${gw.url}/api/posts?authors=${authors}`)).status, 200);
    assert.equal((await get(`${gw.url}/api/orders`, { headers: { authorization: 'Bearer ok' } })).status, 200);
    assert.equal((await get(`${gw.url}/api/orders`, { headers: { authorization: 'Bearer no' } })).status, 401);
  });
  after(() => closeAll(gw, backend, users, auth));

  it('counts every answered mapping call, and only those', async () => {
    const text = await (await request(`${gw.url}/metrics`)).body.text();
    const usersOrigin = `http://${users.host}`;
    assert.equal(users.seen.length, 4);
    assert.equal(sample(text, `portico_mapping_calls_total{route="/posts",origin="${usersOrigin}"}`), 4);
    assert.equal(
      sample(text, `portico_upstream_duration_seconds_count{route="/posts",origin="${usersOrigin}",call="mapping"}`),
      4,
    );
    assert.equal(text.includes(`portico_mapping_calls_total{route="/posts",origin="http://127.0.0.1:${dead}"}`), false);
    assert.equal(sample(text, 'portico_mapping_failures_total{route="/posts",tag="author"}'), 1);
    assert.equal(sample(text, 'portico_mapping_failures_total{route="/posts",tag="extra"}'), 5);
    // The primary call of a mapped route is a backend call like any other.
    assert.equal(
      sample(
        text,
        `portico_upstream_duration_seconds_count{route="/posts",origin="http://${backend.host}",call="backend"}`,
      ),
      3,
    );
  });

  it('records the auth-service call latency next to the auth outcomes', async () => {
    const text = await (await request(`${gw.url}/metrics`)).body.text();
    assert.equal(auth.seen.length, 2);
    assert.equal(
      sample(text, `portico_upstream_duration_seconds_count{route="/orders",origin="http://${auth.host}",call="auth"}`),
      2,
    );
    assert.equal(sample(text, 'portico_auth_results_total{route="/orders",outcome="ok"}'), 1);
    assert.equal(sample(text, 'portico_auth_results_total{route="/orders",outcome="denied"}'), 1);
    assert.equal(
      sample(
        text,
        `portico_upstream_duration_seconds_count{route="/orders",origin="http://${backend.host}",call="backend"}`,
      ),
      1,
    );
  });
});

describe('OTLP spans of mapping and auth-service calls', () => {
  let backend: TestBackend;
  let users: TestBackend;
  let auth: TestBackend;
  let collector: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await postsBackend();
    users = await startBackend((req, res) => json(res, 200, { name: req.url }));
    auth = await authService();
    collector = await startBackend((_req, res) => json(res, 200, {}));
    gw = await startPostsGateway(backend, users, auth, {
      config: `  telemetry: { otlpEndpoint: http://${collector.host} }`,
    });
  });
  after(() => closeAll(gw, collector, backend, users, auth));

  it('exports a client span per call, under the server span, with the id each service received', async () => {
    // The exporter is loaded with a dynamic import: wait (bounded) until it records.
    await waitFor(() => gw.gateway.tracer.isRecording(), 5_000, 'the span exporter recording');
    assert.equal(gw.gateway.tracer.isRecording(), true);
    assert.equal(
      (
        await get(`${gw.url}/api/posts?authors=1`, {
          headers: {
            authorization: 'Bearer ok',
            traceparent: `00-${TRACE}-${PARENT}-01`,
          },
        })
      ).status,
      200,
    );
    type Span = { traceId: string; spanId: string; parentSpanId?: string; kind: number; name: string };
    const spans = (): Span[] =>
      collector.seen.flatMap((s) =>
        (
          JSON.parse(s.body.toString()) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] }
        ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((ss) => ss.spans)),
      );
    // Timer-driven behaviour (batches leave every second): a bounded wait.
    await waitFor(() => spans().length >= 4, 5_000, 'four exported spans');
    const all = spans();
    assert.equal(all.length, 4);
    const server = all.find((s) => s.kind === 2)!;
    assert.equal(server.parentSpanId, PARENT);
    const clients = all.filter((s) => s.kind === 3);
    for (const c of clients) {
      assert.equal(c.traceId, TRACE);
      assert.equal(c.parentSpanId, server.spanId);
    }
    const byName = new Map(clients.map((c) => [c.name, c.spanId]));
    assert.equal(byName.get(`GET ${auth.host}`), traceparentOf(auth.seen[0]!)[1]);
    assert.equal(byName.get(`GET ${backend.host}`), traceparentOf(backend.seen[0]!)[1]);
    assert.equal(byName.get(`GET ${users.host}`), traceparentOf(users.seen[0]!)[1]);
  });
});
