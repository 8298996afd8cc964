/**
 * Who reads GET /metrics (docs/observability.md "Who reads /metrics"): by default a loopback
 * client on the public port, and the admin listener's readers; anyone else needs the metrics
 * token or the operator's opt-in (`telemetry.metricsPublic`). A request that came through a proxy
 * on this machine (it carries a forwarding header) is someone else's, not a loopback client's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { adminRequest } from '../support/admin.js';

const ROUTES = 'routes:\n  - { method: GET, route: /a, service: "127.0.0.1:1", path: /a }\n';
const METRICS_TOKEN = 'a-metrics-token-of-some-length';
const ADMIN_TOKEN = 'an-admin-token-of-some-length';
/** What a proxy on this machine adds to a request it passes on. */
const PROXIED: Record<string, string>[] = [
  { 'x-forwarded-for': '203.0.113.9' },
  { forwarded: 'for=203.0.113.9' },
  { 'x-real-ip': '203.0.113.9' },
];
const FROM_PROXY = PROXIED[0]!;

async function metrics(gw: TestGateway, headers: Record<string, string> = {}) {
  const res = await request(`${gw.url}/metrics`, { headers });
  const text = await res.body.text();
  return { status: res.statusCode, code: res.headers['x-portico-error'], text };
}

describe('GET /metrics by default', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway(ROUTES);
  });
  after(() => gw?.close());

  it('a loopback client reads it on the public port', async () => {
    const r = await metrics(gw);
    assert.equal(r.status, 200);
    assert.match(r.text, /portico_requests_in_flight/);
  });

  it('a request passed on by a proxy on this machine gets 403 JSON GW_METRICS_NOT_PUBLIC', async () => {
    for (const headers of PROXIED) {
      const r = await metrics(gw, headers);
      assert.equal(r.status, 403, JSON.stringify(headers));
      assert.equal(r.code, 'GW_METRICS_NOT_PUBLIC');
      assert.deepEqual(JSON.parse(r.text), {
        error: 'Metrics are not served to this client on this port',
        success: false,
      });
    }
  });

  it('the health endpoints stay open to everyone', async () => {
    for (const path of ['/health', '/ready']) {
      const res = await request(`${gw.url}${path}`, { headers: FROM_PROXY });
      assert.equal(res.statusCode, 200, path);
      await res.body.dump();
    }
  });
});

describe('GET /metrics with telemetry.metricsPublic: true', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway(`${ROUTES}config:\n  telemetry: { metricsPublic: true }\n`);
  });
  after(() => gw?.close());

  it('any client reads it on the public port', async () => {
    const r = await metrics(gw, FROM_PROXY);
    assert.equal(r.status, 200);
    assert.match(r.text, /portico_requests_in_flight/);
  });

  it('a reload back to the default closes it again', async () => {
    gw.reload(ROUTES);
    assert.equal((await metrics(gw, FROM_PROXY)).status, 403);
    gw.reload(`${ROUTES}config:\n  telemetry: { metricsPublic: true }\n`);
    assert.equal((await metrics(gw, FROM_PROXY)).status, 200);
  });
});

describe('GET /metrics on the admin listener', () => {
  let open: TestGateway;
  let guarded: TestGateway;
  before(async () => {
    open = await startGateway(`${ROUTES}config:\n  admin: { port: 0 }\n`);
    guarded = await startGateway(
      `${ROUTES}config:\n  admin: { port: 0, token: "\${ADMIN_TOKEN}" }\n  telemetry: { metricsToken: "\${METRICS_TOKEN}" }\n`,
      { ADMIN_TOKEN, METRICS_TOKEN },
    );
  });
  after(async () => {
    await open?.close();
    await guarded?.close();
  });

  it('is served there to whoever the listener lets in, while the public port keeps its rule', async () => {
    const port = open.gateway.adminAddress()!.port;
    const r = await adminRequest(port, '/metrics');
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'] ?? '', /^text\/plain/);
    assert.match(r.text, /portico_requests_in_flight/);
    assert.equal((await adminRequest(port, '/metrics', { method: 'HEAD' })).status, 200);
    assert.equal((await metrics(open, FROM_PROXY)).status, 403);
  });

  it('with tokens: the admin token or the metrics token, else 401 JSON', async () => {
    const port = guarded.gateway.adminAddress()!.port;
    const none = await adminRequest(port, '/metrics');
    assert.equal(none.status, 401);
    assert.equal(none.headers['x-portico-error'], 'GW_ADMIN_UNAUTHORIZED');
    const wrong = await adminRequest(port, '/metrics', {
      headers: { authorization: 'Bearer not-the-right-token-at-all' },
    });
    assert.equal(wrong.status, 401);
    for (const token of [ADMIN_TOKEN, METRICS_TOKEN]) {
      const r = await adminRequest(port, '/metrics', { headers: { authorization: `Bearer ${token}` } });
      assert.equal(r.status, 200, token);
      assert.match(r.text, /portico_requests_in_flight/);
    }
    // The metrics token opens /metrics only, never the status page's data.
    const status = await adminRequest(port, '/api/status', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(status.status, 401);
  });

  it('answers 404 there too while metrics are off', async () => {
    const off = await startGateway(`${ROUTES}config:\n  admin: { port: 0 }\n  telemetry: { metrics: false }\n`);
    try {
      const r = await adminRequest(off.gateway.adminAddress()!.port, '/metrics');
      assert.equal(r.status, 404);
      assert.equal(r.headers['x-portico-error'], 'GW_ROUTE_NOT_FOUND');
    } finally {
      await off.close();
    }
  });
});
