/**
 * GET /metrics after known traffic through the real gateway: the right series with the
 * right values, route templates as labels (never raw paths).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { getStatus } from '../support/http.js';
import { gatewayForSuite } from '../support/suite-gateway.js';
import { closeAll } from '../support/close-all.js';
import { postsWithAuthors } from '../support/posts-route.js';

/** The value of one sample line of the exposition text. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  let backend: TestBackend;
  let users: TestBackend;
  let failing: TestBackend;
  let gw: TestGateway;
  before(async () => {
    failing = await startBackend((_req, res) => json(res, 500, { error: 'boom' }));
    backend = await startBackend((req, res) => {
      if (req.url === '/posts')
        return json(res, 200, [
          { id: 1, authorId: 7 },
          { id: 2, authorId: 7 },
        ]);
      json(res, 200, { ok: true });
    });
    users = await startBackend((_req, res) => json(res, 200, { name: 'Ada' }));
    const dead = await closedPort();
    gw = await startGateway(`
routes:
  - { method: GET, route: "/users/{id}", service: ${backend.host}, path: "/users/{id}" }
  - { method: GET, route: /fail, service: ${failing.host}, path: /fail }
  - { method: GET, route: /dead, service: 127.0.0.1:${dead}, path: /dead }
${postsWithAuthors(backend, users)}
  - { method: GET, route: /limited, service: ${backend.host}, path: /limited,
      rateLimit: { requestsPerSec: 1, burst: 1 } }
config:
  circuitBreaker:
    enabled: true
    maxFailures: 2
  mappingCache:
    enabled: true
`);
    for (const id of ['1', '2', '3']) assert.equal(await getStatus(`${gw.url}/api/users/${id}`), 200);
    assert.equal(await getStatus(`${gw.url}/api/users/4`, { headers: { 'x-request-id': 'known' } }), 200);
    assert.equal(await getStatus(`${gw.url}/api/nope`), 404);
    assert.equal(await getStatus(`${gw.url}/api/fail`), 500);
    assert.equal(await getStatus(`${gw.url}/api/fail`), 500);
    assert.equal(await getStatus(`${gw.url}/api/fail`), 503); // circuit open after 2 failures
    assert.equal(await getStatus(`${gw.url}/api/dead`), 502);
    assert.equal(await getStatus(`${gw.url}/api/posts`), 200);
    assert.equal(await getStatus(`${gw.url}/api/posts`), 200);
    assert.equal(await getStatus(`${gw.url}/api/limited`), 200);
    assert.equal(await getStatus(`${gw.url}/api/limited`), 429);
  });
  after(() => closeAll(gw, backend, users, failing));

  it('serves Prometheus text with no store', async () => {
    const res = await request(`${gw.url}/metrics`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    const text = await res.body.text();
    assert.match(text, /^# HELP portico_requests_total /m);
    assert.match(text, /^process_resident_memory_bytes \d+/m);
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
  });

  it('counts requests by route template, method and status class', async () => {
    const text = await (await request(`${gw.url}/metrics`)).body.text();
    const req = (route: string, cls: string) =>
      sample(text, `portico_requests_total{route="${route}",method="GET",status_class="${cls}"}`);
    assert.equal(req('/users/{id}', '2xx'), 4);
    assert.equal(req('unmatched', '4xx'), 1);
    assert.equal(req('/fail', '5xx'), 3);
    assert.equal(req('/dead', '5xx'), 1);
    assert.equal(req('/posts', '2xx'), 2);
    assert.equal(req('/limited', '2xx'), 1);
    assert.equal(req('/limited', '4xx'), 1);
    assert.equal(
      sample(text, 'portico_request_duration_seconds_count{route="/users/{id}",method="GET",status_class="2xx"}'),
      4,
    );
    assert.equal(text.includes('/api/users/1'), false);
    assert.equal(text.includes('users/4'), false);
  });

  it('records upstream latency, upstream errors by kind and gateway error codes', async () => {
    const text = await (await request(`${gw.url}/metrics`)).body.text();
    const origin = `http://${backend.host}`;
    assert.equal(
      sample(text, `portico_upstream_duration_seconds_count{route="/users/{id}",origin="${origin}",call="backend"}`),
      4,
    );
    assert.equal(
      sample(
        text,
        `portico_upstream_duration_seconds_count{route="/fail",origin="http://${failing.host}",call="backend"}`,
      ),
      2,
    );
    assert.match(
      text,
      /^portico_upstream_errors_total\{route="\/dead",origin="http:\/\/127\.0\.0\.1:\d+",kind="refused"\} 1$/m,
    );
    assert.equal(sample(text, 'portico_gateway_errors_total{code="GW_CIRCUIT_OPEN"}'), 1);
    assert.equal(sample(text, 'portico_gateway_errors_total{code="GW_UPSTREAM_UNREACHABLE"}'), 1);
    assert.equal(sample(text, 'portico_gateway_errors_total{code="GW_RATE_LIMITED"}'), 1);
    assert.equal(sample(text, 'portico_gateway_errors_total{code="GW_ROUTE_NOT_FOUND"}'), 1);
    assert.equal(sample(text, 'portico_rate_limited_total{route="/limited"}'), 1);
  });

  it('shows the circuit state per origin, read at scrape time', async () => {
    const text = await (await request(`${gw.url}/metrics`)).body.text();
    const origin = `http://${failing.host}`;
    assert.equal(sample(text, `portico_circuit_state{origin="${origin}",state="open"}`), 1);
    assert.equal(sample(text, `portico_circuit_state{origin="${origin}",state="closed"}`), 0);
    assert.equal(sample(text, `portico_circuit_state{origin="http://${backend.host}",state="closed"}`), 1);
    assert.equal(sample(text, `portico_circuit_state{origin="http://${users.host}",state="closed"}`), 1);
    assert.equal(sample(text, `portico_circuit_transitions_total{origin="${origin}",state="open"}`), 1);
  });

  it('shows the mapping cache counters, read at scrape time', async () => {
    const text = await (await request(`${gw.url}/metrics`)).body.text();
    // Two posts share authorId 7: one call on the first request, a cache hit on the second.
    assert.equal(users.seen.length, 1);
    assert.equal(sample(text, 'portico_mapping_cache_misses_total'), 1);
    assert.equal(sample(text, 'portico_mapping_cache_hits_total'), 1);
    assert.equal(sample(text, 'portico_mapping_cache_evictions_total'), 0);
    assert.equal(sample(text, 'portico_mapping_cache_entries'), 1);
  });

  it('counts in-flight requests, excluding the scrape itself', async () => {
    const text = await (await request(`${gw.url}/metrics`)).body.text();
    assert.equal(sample(text, 'portico_requests_in_flight'), 0);
  });
});

describe('GET /metrics turned off', () => {
  const s = gatewayForSuite(
    (backend) => `
routes:
  - { method: GET, route: /a, service: ${backend.host}, path: /a }
config:
  telemetry:
    metrics: false
`,
  );

  it('answers 404 and subscribes nothing to the request path', async () => {
    assert.equal(await getStatus(`${s.gw.url}/metrics`), 404);
    assert.equal(s.gw.gateway.metrics(), undefined);
  });

  it('starts counting after a reload turns metrics on, and keeps the registry on later reloads', async () => {
    const on = `
routes:
  - { method: GET, route: /a, service: ${s.backend.host}, path: /a }
`;
    s.gw.reload(on);
    assert.equal(await getStatus(`${s.gw.url}/api/a`), 200);
    const registry = s.gw.gateway.metrics()?.registry;
    s.gw.reload(on);
    assert.equal(s.gw.gateway.metrics()?.registry, registry);
    assert.equal(await getStatus(`${s.gw.url}/api/a`), 200);
    const text = await (await request(`${s.gw.url}/metrics`)).body.text();
    assert.equal(sample(text, 'portico_requests_total{route="/a",method="GET",status_class="2xx"}'), 2);
  });
});

describe('GET /metrics behind telemetry.metricsToken', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway('routes: []\nconfig:\n  telemetry: { metricsToken: "${METRICS_TOKEN}" }', {
      METRICS_TOKEN: 'a-long-enough-token-1234',
    });
  });
  after(async () => {
    await gw?.close();
  });

  it('401 JSON without the token or with a wrong one, the text with it', async () => {
    let res = await request(`${gw.url}/metrics`);
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="metrics"');
    assert.deepEqual(await res.body.json(), { error: 'Missing bearer token', success: false });
    res = await request(`${gw.url}/metrics`, { headers: { authorization: 'Bearer a-long-enough-token-1235' } });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['x-portico-error'], 'GW_AUTH_INVALID');
    await res.body.dump();
    res = await request(`${gw.url}/metrics`, { headers: { authorization: 'Bearer a-long-enough-token-1234' } });
    assert.equal(res.statusCode, 200);
    assert.match(await res.body.text(), /portico_requests_total|process_cpu/);
  });

  it('the health endpoints stay open', async () => {
    assert.equal(await getStatus(`${gw.url}/health`), 200);
    assert.equal(await getStatus(`${gw.url}/ready`), 200);
  });
});
