/**
 * Every request the gateway answers is logged and counted once, CORS preflights included: they are
 * answered by the gateway itself (never forwarded), and used to appear neither in the access log
 * nor in `portico_requests_total`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { json, rawRequest, startBackend } from '../support/backend.js';
import { gatewayForSuite } from '../support/suite-gateway.js';

describe('CORS preflights are logged and counted', () => {
  const s = gatewayForSuite(
    (backend) => `
routes:
  - { method: PATCH, route: "/items/{id}", service: ${backend.host}, path: "/items/{id}" }
config:
  cors:
    origins: [https://app.example.com]
`,
    () => startBackend((req, res) => json(res, 200, { method: req.method })),
  );

  it('one access log line and one portico_requests_total sample per preflight, under the route it asks about', async () => {
    const logsBefore = s.gw.logs.length;
    for (let i = 0; i < 2; i++) {
      const res = await rawRequest(s.gw.url, '/api/items/7', {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example.com',
          'access-control-request-method': 'PATCH',
          'x-request-id': `pre-${i}`,
        },
      });
      assert.equal(res.status, 204);
    }
    const lines = s.gw.logs.slice(logsBefore).filter((l) => l.msg === 'request');
    assert.deepEqual(
      lines.map((l) => ({ reqId: l.reqId, method: l.method, route: l.route, path: l.path, status: l.status })),
      [0, 1].map((i) => ({
        reqId: `pre-${i}`,
        method: 'OPTIONS',
        route: 'PATCH /items/{id}',
        path: '/api/items/7',
        status: 204,
      })),
    );
    const text = await (await request(`${s.gw.url}/metrics`)).body.text();
    assert.match(text, /^portico_requests_total\{route="\/items\/\{id\}",method="OPTIONS",status_class="2xx"\} 2$/m);
    assert.equal(s.backend.seen.length, 0, 'never forwarded');
  });
});
