import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { closedPort, json, rawRequest, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';

describe('standard routes proxy to the backend', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((req, res, body) =>
      json(res, 200, { method: req.method, url: req.url, body: body.toString() }, { 'x-backend': 'yes' }),
    );
    gw = await startGateway(`
routes:
  - { method: GET, route: /products, service: ${backend.host}, path: /products }
  - { method: GET, route: "/users/{id}", service: http://${backend.host}, path: "/users/{id}" }
  - { method: GET, route: "/company/{companyId}/users", service: ${backend.host}, path: "/users?companyId={companyId}" }
  - { method: GET, route: "/a/{x}/b/{y}", service: ${backend.host}, path: "/y/{y}/x/{x}" }
  - { method: POST, route: /products, service: ${backend.host}, path: /products/create }
  - { method: PUT, route: "/products/{id}", service: ${backend.host}, path: "/products/{id}" }
  - { method: DELETE, route: "/products/{id}", service: ${backend.host}, path: "/products/{id}" }
  - { method: PATCH, route: "/products/{id}", service: ${backend.host}, path: "/products/{id}" }
  - { method: OPTIONS, route: /products, service: ${backend.host}, path: /products }
`);
  });
  after(() => closeAll(gw, backend));

  const cases = [
    { name: 'plain GET under /api', method: 'GET', path: '/api/products', backendSaw: '/products' },
    { name: 'path parameter', method: 'GET', path: '/api/users/42', backendSaw: '/users/42' },
    {
      name: 'query template from a path parameter',
      method: 'GET',
      path: '/api/company/7/users',
      backendSaw: '/users?companyId=7',
    },
    {
      name: 'client query after the template query',
      method: 'GET',
      path: '/api/company/7/users?page=2&sort=name',
      backendSaw: '/users?companyId=7&page=2&sort=name',
    },
    {
      name: 'client cannot override a query parameter the path sets',
      method: 'GET',
      path: '/api/company/7/users?companyId=9&page=2',
      backendSaw: '/users?companyId=7&page=2',
    },
    {
      name: 'client query forwarded',
      method: 'GET',
      path: '/api/products?q=a%20b&tag=x&tag=y',
      backendSaw: '/products?q=a%20b&tag=x&tag=y',
    },
    { name: 'several parameters, reordered', method: 'GET', path: '/api/a/1/b/2', backendSaw: '/y/2/x/1' },
    {
      name: 'encoded slash stays encoded',
      method: 'GET',
      path: '/api/users/a%2Fadmin',
      backendSaw: '/users/a%2Fadmin',
    },
    { name: 'dots inside a value are kept', method: 'GET', path: '/api/users/a..b', backendSaw: '/users/a..b' },
    {
      name: 'ampersand cannot add a query parameter',
      method: 'GET',
      path: '/api/company/1%26role=admin/users',
      backendSaw: '/users?companyId=1%26role%3Dadmin',
    },
    { name: 'PUT', method: 'PUT', path: '/api/products/3', backendSaw: '/products/3' },
    { name: 'DELETE', method: 'DELETE', path: '/api/products/3', backendSaw: '/products/3' },
    { name: 'PATCH', method: 'PATCH', path: '/api/products/3', backendSaw: '/products/3' },
    { name: 'OPTIONS', method: 'OPTIONS', path: '/api/products', backendSaw: '/products' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const res = await rawRequest(gw.url, c.path, { method: c.method });
      const body = JSON.parse(res.body) as { method: string; url: string };
      assert.equal(res.status, 200);
      assert.equal(body.method, c.method);
      assert.equal(body.url, c.backendSaw);
      assert.equal(backend.seen.at(-1)?.url, c.backendSaw);
      assert.equal(res.headers['x-backend'], 'yes');
    });
  }

  for (const path of [
    '/api/users/%2e%2e',
    '/api/users/%2E%2E',
    '/api/users/..',
    '/api/users/.',
    '/api/users/..%2Fadmin',
    '/api/users/..%5Cadmin',
    '/api/users/x%2F..',
    '/api/a/1/b/%2e%2e%2f%2e%2e',
  ]) {
    it(`400 JSON for a dot-segment parameter before any backend call: ${path}`, async () => {
      const before = backend.seen.length;
      const res = await rawRequest(gw.url, path, { method: 'GET' });
      assert.equal(res.status, 400);
      assert.deepEqual(JSON.parse(res.body), {
        error: 'A path parameter may not be a dot-segment (. or ..)',
        success: false,
      });
      assert.equal(res.headers['x-portico-error'], 'GW_PATH_PARAM_INVALID');
      assert.equal(backend.seen.length, before);
    });
  }

  it('streams a POST body to the backend and relays status and body', async () => {
    const res = await request(`${gw.url}/api/products`, {
      method: 'POST',
      body: '{"name":"x"}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await res.body.json(), { method: 'POST', url: '/products/create', body: '{"name":"x"}' });
    assert.equal(backend.seen.at(-1)?.headers['content-type'], 'application/json');
  });

  it('answers HEAD on a GET route without a body', async () => {
    const res = await request(`${gw.url}/api/products`, { method: 'HEAD' });
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), '');
    assert.equal(backend.seen.at(-1)?.method, 'HEAD');
  });

  it('404 JSON for an unknown path, and the backend is not called', async () => {
    const before = backend.seen.length;
    const res = await request(`${gw.url}/api/nothing`);
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(await res.body.json(), { error: 'No route matches this path', success: false });
    assert.equal(backend.seen.length, before);
  });

  it('404 for a route outside basePath and for an empty parameter', async () => {
    for (const path of ['/products', '/api/users/']) {
      const res = await request(gw.url + path);
      assert.equal(res.statusCode, 404, path);
      await res.body.dump();
    }
  });

  it('405 with Allow when the path exists for other methods', async () => {
    const res = await request(`${gw.url}/api/users/1`, { method: 'DELETE' });
    assert.equal(res.statusCode, 405);
    assert.equal(res.headers.allow, 'GET, HEAD');
    assert.deepEqual(await res.body.json(), { error: 'Method not allowed on this route', success: false });
  });
});

describe('backend failures', () => {
  it('502 JSON when the backend refuses the connection', async () => {
    const port = await closedPort();
    const gw = await startGateway(`routes: [{ method: GET, route: /x, service: 127.0.0.1:${port}, path: /x }]`);
    try {
      const res = await request(`${gw.url}/api/x`);
      assert.equal(res.statusCode, 502);
      assert.deepEqual(await res.body.json(), { error: 'Backend service unreachable', success: false });
      assert.equal(res.headers['x-portico-error'], 'GW_UPSTREAM_UNREACHABLE');
      assert.ok(
        gw.logs.some((l) => l.msg === 'upstream error' && l.kind === 'refused'),
        'cause logged',
      );
    } finally {
      await gw.close();
    }
  });

  it('502 when the backend resets the connection before answering', async () => {
    const backend = await startBackend((req) => {
      req.socket.destroy();
    });
    const gw = await startGateway(`routes: [{ method: GET, route: /x, service: ${backend.host}, path: /x }]`);
    try {
      const res = await request(`${gw.url}/api/x`);
      assert.equal(res.statusCode, 502);
      await res.body.dump();
    } finally {
      await closeAll(gw, backend);
    }
  });

  it('504 JSON when the backend sends no headers within timeouts.backendSec', async () => {
    const backend = await startBackend(() => {
      /* never answers */
    });
    const gw = await startGateway(`
routes: [{ method: GET, route: /slow, service: ${backend.host}, path: /slow }]
config: { timeouts: { backendSec: 0.3 } }`);
    try {
      const started = Date.now();
      const res = await request(`${gw.url}/api/slow`);
      assert.equal(res.statusCode, 504);
      assert.deepEqual(await res.body.json(), { error: 'Backend service did not answer in time', success: false });
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 250 && elapsed < 2000, `took ${elapsed} ms`);
    } finally {
      await closeAll(gw, backend);
    }
  });
});

describe('the backend timeout covers the wait for a pooled connection', () => {
  it('queued requests get their 504 after backendSec, not backendSec after a connection frees', async () => {
    // The first request holds the only connection: its head comes at once, its body never ends
    // (backendIdleSec is far off). The two behind it wait in the queue the whole time.
    const backend = await startBackend((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part');
    });
    const backendMs = 1_000;
    const gw = await startGateway(`
routes: [{ method: GET, route: /slow, service: ${backend.host}, path: /slow }]
config: { timeouts: { backendSec: ${backendMs / 1000}, backendIdleSec: 30 }, limits: { connectionsPerOrigin: 1 } }`);
    const holder = await request(`${gw.url}/api/slow`);
    try {
      assert.equal(holder.statusCode, 200);
      const started = Date.now();
      const results = await Promise.all(
        [1, 2].map(async () => {
          const res = await request(`${gw.url}/api/slow`);
          await res.body.dump();
          return { status: res.statusCode, ms: Date.now() - started };
        }),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        [504, 504],
      );
      // Timed from their own arrival: at backendSec (the sweep may add up to a tenth of it and a
      // busy machine a little more), never before it, and not whenever the connection frees.
      for (const { ms } of results) {
        assert.ok(ms >= backendMs * 0.95, `504 after ${ms} ms, before backendSec (${backendMs} ms)`);
        assert.ok(ms < backendMs * 2, `504 after ${ms} ms, expected about backendSec (${backendMs} ms)`);
      }
      assert.equal(backend.seen.length, 1, 'the queued requests never reached the backend');
    } finally {
      holder.body.destroy();
      await gw.close();
      await backend.close();
    }
  });
});

describe('connection pooling', () => {
  it('reuses one keep-alive connection to the backend for sequential requests', async () => {
    const backend = await startBackend();
    let connections = 0;
    backend.server.on('connection', () => connections++);
    const gw = await startGateway(`routes: [{ method: GET, route: /k, service: ${backend.host}, path: /k }]`);
    try {
      for (let i = 0; i < 10; i++) {
        const res = await request(`${gw.url}/api/k`);
        await res.body.dump();
        assert.equal(res.statusCode, 200);
      }
      assert.equal(backend.seen.length, 10);
      assert.equal(connections, 1);
    } finally {
      await closeAll(gw, backend);
    }
  });
});
