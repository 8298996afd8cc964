/**
 * Two Host fields, a Host that is no `host[:port]`, or none on HTTP/1.1 (RFC 9112 3.2) get 400
 * `GW_BAD_HOST` on every path a request can take, before anything answers it: the gateway's own
 * endpoints, CORS preflights, 404 and 405, upgrades with and without a WebSocket route, CONNECT,
 * HTTP/2 streams, the admin listener and the HTTPS gateway's redirect listener. Each path also
 * gets a request with a good Host, to show it answers otherwise. Requests are written on raw
 * sockets (one connection each), since no HTTP client sends two Host fields.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { withRawConnection } from '../support/raw-http.js';
import { assertErrorHead } from '../support/error-answer.js';
import { createTestCa, type TestCa } from '../support/certs.js';
import { h2request } from '../support/http2.js';

const ADMIN_TOKEN = 'admin-token-for-host-tests';
const WEBSOCKET =
  'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

/** Host fields that must be refused, as raw header lines (none at all for the last). */
const BAD_HOSTS: Record<string, string> = {
  'two Host fields': 'Host: 127.0.0.1\r\nHost: evil.example\r\n',
  'a Host with a path and userinfo': 'Host: evil.example/reset?x=@y\r\n',
  'no Host on HTTP/1.1': '',
};

interface Row {
  readonly name: string;
  /** Which listener: the public port, the admin listener, the redirect listener. */
  readonly listener: 'public' | 'admin' | 'redirect';
  /** The request line. */
  readonly line: string;
  /** Header lines besides Host. */
  readonly headers?: string;
  /** The status with a good Host. */
  readonly fine: number;
}

const ROWS: readonly Row[] = [
  { name: 'GET /health', listener: 'public', line: 'GET /health HTTP/1.1', fine: 200 },
  { name: 'GET /ready', listener: 'public', line: 'GET /ready HTTP/1.1', fine: 200 },
  { name: 'GET /metrics', listener: 'public', line: 'GET /metrics HTTP/1.1', fine: 200 },
  {
    name: 'a CORS preflight',
    listener: 'public',
    line: 'OPTIONS /api/a HTTP/1.1',
    headers: 'Origin: https://app.example.com\r\nAccess-Control-Request-Method: GET\r\n',
    fine: 204,
  },
  { name: 'no route (404)', listener: 'public', line: 'GET /api/nothing HTTP/1.1', fine: 404 },
  { name: 'a method the route lacks (405)', listener: 'public', line: 'DELETE /api/a HTTP/1.1', fine: 405 },
  { name: 'a route', listener: 'public', line: 'GET /api/a HTTP/1.1', fine: 200 },
  {
    name: 'a WebSocket handshake for a WebSocket route',
    listener: 'public',
    line: 'GET /api/ws HTTP/1.1',
    headers: WEBSOCKET,
    fine: 502,
  },
  {
    name: 'a WebSocket handshake with no route',
    listener: 'public',
    line: 'GET /api/nothing HTTP/1.1',
    headers: WEBSOCKET,
    fine: 404,
  },
  {
    name: 'an h2c upgrade on a route',
    listener: 'public',
    line: 'GET /api/a HTTP/1.1',
    headers: 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n',
    fine: 200,
  },
  { name: 'CONNECT', listener: 'public', line: 'CONNECT 127.0.0.1:443 HTTP/1.1', fine: 405 },
  { name: 'admin: the status page', listener: 'admin', line: 'GET / HTTP/1.1', fine: 401 },
  {
    name: 'admin: the JSON API',
    listener: 'admin',
    line: 'GET /api/status HTTP/1.1',
    headers: `Authorization: Bearer ${ADMIN_TOKEN}\r\n`,
    fine: 200,
  },
  { name: 'admin: no such path', listener: 'admin', line: 'GET /nothing HTTP/1.1', fine: 404 },
  { name: 'redirect listener: a redirect', listener: 'redirect', line: 'GET /api/a?x=1 HTTP/1.1', fine: 308 },
  { name: 'redirect listener: GET /health', listener: 'redirect', line: 'GET /health HTTP/1.1', fine: 200 },
];

let backend: TestBackend;
let gw: TestGateway;
let ca: TestCa;
let tlsGw: TestGateway;

before(async () => {
  backend = await startBackend((_req, res) => json(res, 200, { ok: true }));
  gw = await startGateway(`
config:
  http2: { cleartext: true }
  cors: { origins: [https://app.example.com] }
  admin: { port: 0, token: ${ADMIN_TOKEN} }
routes:
  - { method: GET, route: /a, service: ${backend.host}, path: /a }
  - { method: GET, route: /ws, service: 127.0.0.1:1, path: /ws, isWebSocket: true }
`);
  ca = createTestCa();
  const cert = ca.issue('localhost');
  tlsGw = await startGateway(`
config:
  tls: { certFile: ${cert.certFile}, keyFile: ${cert.keyFile}, redirectPort: 0 }
routes:
  - { method: GET, route: /a, service: ${backend.host}, path: /a }
`);
});
after(async () => {
  await closeAll(gw, tlsGw, backend);
  ca?.remove();
});

function portOf(listener: Row['listener']): number {
  if (listener === 'admin') return gw.gateway.adminAddress()!.port;
  if (listener === 'redirect') return tlsGw.gateway.redirectAddress()!.port;
  return gw.port;
}

/** The status and headers of one request written as it is, on a connection of its own. */
function send(row: Row, host: string): Promise<{ status: number; headers: Record<string, string> }> {
  return withRawConnection(portOf(row.listener), async (c) => {
    c.write(`${row.line}\r\n${host}${row.headers ?? ''}Connection: close\r\n\r\n`);
    return c.next(5_000);
  });
}

describe('a bad Host is refused with 400 GW_BAD_HOST on every path', () => {
  for (const row of ROWS) {
    it(`${row.name}: answered with a good Host`, async () => {
      const res = await send(row, 'Host: 127.0.0.1\r\n');
      assert.equal(res.status, row.fine, JSON.stringify(res.headers));
    });
    for (const [bad, lines] of Object.entries(BAD_HOSTS)) {
      it(`${row.name}: ${bad}`, async () => {
        assertErrorHead(await send(row, lines), 400, 'GW_BAD_HOST');
      });
    }
  }
});

describe('HTTP/2 streams', () => {
  let session: ClientHttp2Session;
  before(() => {
    session = h2connect(gw.url);
  });
  after(() => session.close());

  const paths = ['/health', '/metrics', '/api/a', '/api/nothing'];
  for (const path of paths) {
    it(`${path}: a host field that names another host than :authority is refused`, async () => {
      const res = await h2request(session, path, { ':authority': '127.0.0.1', host: 'evil.example' });
      assert.equal(res.status, 400);
      assert.equal(res.headers['x-portico-error'], 'GW_BAD_HOST');
    });
    it(`${path}: a host field beside :authority that names it is answered`, async () => {
      const res = await h2request(session, path, { ':authority': '127.0.0.1', host: '127.0.0.1' });
      assert.notEqual(res.status, 400);
    });
  }

  it('no :authority and two host fields: refused', async () => {
    const res = await h2request(session, '/health', { ':authority': '', host: 'a.example, b.example' }).catch(
      (err: NodeJS.ErrnoException) => err.code ?? String(err),
    );
    if (typeof res === 'string') assert.equal(res, 'ERR_HTTP2_STREAM_ERROR');
    else assert.equal(res.status, 400);
  });
});
