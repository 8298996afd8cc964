/**
 * Host routing end to end (docs/routing.md "Host routing"): routes limited by `hosts:` over
 * HTTP/1.1 (`Host`) and HTTP/2 (`:authority`), exact names before `*.domain` before the routes
 * without hosts, case, port and a final dot ignored, an IPv6 literal; 404 GW_HOST_NOT_FOUND when
 * no route serves the host; and on a TLS listener with per-host certificates, 421 for a request
 * whose host another certificate serves than the connection's (HTTP/1.1 and HTTP/2).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { json, rawRequest, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { h2request } from '../support/http2.js';
import { createTestCa, type TestCa } from '../support/certs.js';
import { docExample } from '../support/doc-example.js';

/** The example of docs/routing.md "Host routing" as written there; without its last route when `withDefault` is false. */
function hostsYaml(service: string, withDefault: boolean): string {
  const yaml = docExample('routing.md', '## Host routing', service);
  const last = yaml.lastIndexOf('  - method: GET');
  assert.match(yaml.slice(last), /path: \/default-users/);
  return withDefault ? yaml : yaml.slice(0, last);
}

describe('host routing', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  let only: TestGateway;
  let h2: ClientHttp2Session;
  before(async () => {
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    gw = await startGateway(hostsYaml(backend.host, true));
    only = await startGateway(hostsYaml(backend.host, false));
    h2 = connect(gw.url);
  });
  after(async () => {
    h2.close();
    await closeAll(gw, only, backend);
  });

  const cases = [
    { host: 'api.example.com', path: '/api/users', saw: '/api-users' },
    { host: 'API.Example.COM:8080', path: '/api/users', saw: '/api-users' },
    { host: 'api.example.com.', path: '/api/users', saw: '/api-users' },
    { host: '[::1]:8080', path: '/api/users', saw: '/api-users' },
    { host: 'acme.tenants.example.com', path: '/api/users', saw: '/tenant-users' },
    { host: 'a.b.tenants.example.com', path: '/api/users', saw: '/default-users' },
    { host: 'tenants.example.com', path: '/api/users', saw: '/default-users' },
    { host: 'other.example.org', path: '/api/users', saw: '/default-users' },
    { host: 'cdn.example.com', path: '/api/static/app.js?v=3', saw: '/cdn/app.js?v=3' },
  ];
  for (const c of cases) {
    it(`HTTP/1.1 Host and HTTP/2 :authority ${c.host}: ${c.path} -> ${c.saw}`, async () => {
      const h1 = await rawRequest(gw.url, c.path, { headers: { host: c.host } });
      assert.equal(h1.status, 200, h1.body);
      assert.equal((JSON.parse(h1.body) as { url: string }).url, c.saw);
      const two = await h2request(h2, c.path, { ':authority': c.host });
      assert.equal(two.status, 200, two.body);
      assert.equal((JSON.parse(two.body) as { url: string }).url, c.saw);
    });
  }

  it('a host route serves only its hosts: 404 GW_ROUTE_NOT_FOUND on another host', async () => {
    const r = await rawRequest(gw.url, '/api/static/app.js', { headers: { host: 'api.example.com' } });
    assert.equal(r.status, 404);
    assert.equal(r.headers['x-portico-error'], 'GW_ROUTE_NOT_FOUND');
  });

  it('404 GW_HOST_NOT_FOUND when every route names its hosts and none is this one', async () => {
    const before = backend.seen.length;
    const h1 = await rawRequest(only.url, '/api/users', { headers: { host: 'unknown.example.com' } });
    assert.equal(h1.status, 404);
    assert.deepEqual(JSON.parse(h1.body), { error: 'No route serves this host', success: false });
    assert.equal(h1.headers['x-portico-error'], 'GW_HOST_NOT_FOUND');
    const session = connect(only.url);
    try {
      const two = await h2request(session, '/api/users', { ':authority': 'tenants.example.com' });
      assert.equal(two.status, 404);
      assert.equal(two.headers['x-portico-error'], 'GW_HOST_NOT_FOUND');
      const served = await h2request(session, '/api/users', { ':authority': 'x.tenants.example.com' });
      assert.equal(served.status, 200);
    } finally {
      session.close();
    }
    assert.equal(backend.seen.length, before + 1);
  });
});

describe('host routing and TLS: per-host certificates (421)', () => {
  let ca: TestCa;
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    ca = createTestCa();
    const main = ca.issue('localhost');
    const a = ca.issue('a.example.test');
    const wild = ca.issue('*.wild.example.test', 'wild');
    backend = await startBackend((req, res) => json(res, 200, { url: req.url }));
    gw = await startGateway(`
config:
  tls:
    certFile: ${main.certFile}
    keyFile: ${main.keyFile}
    sni:
      a.example.test: { certFile: ${a.certFile}, keyFile: ${a.keyFile} }
      "*.wild.example.test": { certFile: ${wild.certFile}, keyFile: ${wild.keyFile} }
routes:
  - { method: GET, route: /who, service: ${backend.host}, path: /a, hosts: [a.example.test] }
  - { method: GET, route: /who, service: ${backend.host}, path: /wild, hosts: ["*.wild.example.test"] }
  - { method: GET, route: /who, service: ${backend.host}, path: /other }
`);
  });
  after(async () => {
    await closeAll(gw, backend);
    ca.remove();
  });

  const h1 = (servername: string, host: string) =>
    new Promise<{ status: number; code: string | undefined; body: string }>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: gw.port,
          path: '/api/who',
          servername,
          ca: readFileSync(ca.caFile),
          headers: { host },
          agent: false,
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, code: res.headers['x-portico-error'] as string | undefined, body }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });

  it("HTTP/1.1: the host of the connection's certificate is served; another certificate's host is 421", async () => {
    const ok = await h1('a.example.test', 'a.example.test:443');
    assert.equal(ok.status, 200);
    assert.deepEqual(JSON.parse(ok.body), { url: '/a' });
    const wild = await h1('x.wild.example.test', 'y.wild.example.test');
    assert.deepEqual(JSON.parse(wild.body), { url: '/wild' });
    const other = await h1('localhost', 'other.example.test');
    assert.deepEqual(JSON.parse(other.body), { url: '/other' });
    const before = backend.seen.length;
    const crossed = await h1('a.example.test', 'x.wild.example.test');
    assert.equal(crossed.status, 421);
    assert.equal(crossed.code, 'GW_MISDIRECTED_REQUEST');
    assert.equal((await h1('localhost', 'a.example.test')).status, 421);
    assert.equal(backend.seen.length, before);
  });

  it("HTTP/2: a connection opened for one certificate's host is not reused for another's", async () => {
    const session = connect(`https://127.0.0.1:${gw.port}`, {
      servername: 'a.example.test',
      ca: readFileSync(ca.caFile),
    });
    try {
      const ok = await h2request(session, '/api/who', { ':authority': 'a.example.test' });
      assert.equal(ok.status, 200);
      const crossed = await h2request(session, '/api/who', { ':authority': 'b.wild.example.test' });
      assert.equal(crossed.status, 421);
      assert.equal(crossed.headers['x-portico-error'], 'GW_MISDIRECTED_REQUEST');
    } finally {
      session.close();
    }
  });
});
