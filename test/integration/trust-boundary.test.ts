/**
 * The trust boundary (docs/security.md "What a backend may believe"): the same hostile request
 * sent to every route kind (plain, field-filtered, mapped, aggregated, SSE, WebSocket, over
 * HTTP/1.1 and h2c) reaches its backend with none of what the gateway did not check. One table
 * of hostile headers, one assertion per route kind, so a route kind added later joins the table.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session } from 'node:http2';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'undici';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';
import { handshakeHeaders, startWsBackend, upgradeRequest, type WsBackend } from '../support/ws-backend.js';
import { h2request } from '../support/http2.js';

/** What a client sends that no backend may see, whatever the route kind. */
const HOSTILE: Record<string, string> = {
  // Underscore spellings: CGI, WSGI, Rack and PHP-FPM read them as X-role, X-Forwarded-For.
  x_role: 'admin',
  x_sub: 'root',
  x_forwarded_for: '6.6.6.6',
  x_real_ip: '6.6.6.6',
  x_http_method_override: 'DELETE',
  'x-role': 'admin',
  'x-http-method-override': 'DELETE',
  'x-forwarded-port': '1',
  'x-original-url': '/admin',
  'true-client-ip': '6.6.6.6',
};

/** Names a backend may find in no spelling (header names folded: lower case, `_` as `-`). */
const NEVER_SEEN = ['x-role', 'x-sub', 'x-real-ip', 'x-http-method-override', 'x-forwarded-port', 'x-original-url'];

function folded(headers: IncomingHttpHeaders): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) out.set(name.toLowerCase().replaceAll('_', '-'), String(value));
  return out;
}

function assertNothingUnchecked(headers: IncomingHttpHeaders, what: string): void {
  const seen = folded(headers);
  for (const name of NEVER_SEEN) assert.equal(seen.get(name), undefined, `${what}: ${name} reached the backend`);
  assert.equal(seen.get('true-client-ip'), undefined, what);
  // The gateway's own X-Forwarded-For names the real peer, not the client's underscore spelling.
  assert.equal(seen.get('x-forwarded-for'), '127.0.0.1', what);
  assert.ok(!Object.keys(headers).some((n) => n.includes('_')), `${what}: an underscore name passed`);
}

describe('the trust boundary, on every route kind', () => {
  let backend: TestBackend;
  let ws: WsBackend;
  let gw: TestGateway;
  let h2: ClientHttp2Session | undefined;

  before(async () => {
    backend = await startBackend((req, res) => {
      if (req.url?.startsWith('/events')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: one\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":1,"name":"Ann","password":"x"}');
    });
    ws = await startWsBackend();
    const b = backend.host;
    gw = await startGateway(`
config:
  http2: { cleartext: true }
routes:
  - { method: GET, route: /plain, service: ${b}, path: /plain }
  - { method: GET, route: /filtered, service: ${b}, path: /filtered, response: { deny: [password] } }
  - method: GET
    route: /mapped
    service: ${b}
    path: /mapped
    mapping: [{ path: "/names/{name}", service: ${b}, tag: named }]
  - method: GET
    route: /aggregated
    backends: [{ service: ${b}, path: /one, group: one }, { service: ${b}, path: /two, group: two }]
  - { method: GET, route: /events, service: ${b}, path: /events, isSSE: true }
  - { method: GET, route: /socket, service: 127.0.0.1:${ws.port}, path: /socket, isWebSocket: true }
  - { method: GET, route: /open, service: ${b}, path: /open, headers: { allowUnderscores: true } }
`);
    h2 = connect(gw.url);
  });
  after(async () => {
    h2?.close();
    await closeAll(gw, backend, ws);
  });

  for (const path of ['/plain', '/filtered', '/mapped', '/aggregated', '/events']) {
    it(`${path} over HTTP/1.1: nothing the gateway did not check reaches the backend`, async () => {
      const before = backend.seen.length;
      const res = await request(`${gw.url}/api${path}`, { headers: HOSTILE });
      await res.body.text();
      assert.equal(res.statusCode, 200);
      const calls = backend.seen.slice(before).filter((s) => !s.url.startsWith('/names/'));
      assert.ok(calls.length >= 1, path);
      for (const seen of calls) assertNothingUnchecked(seen.headers, `${path} -> ${seen.url}`);
    });
  }

  it('/plain over h2c: the same', async () => {
    const before = backend.seen.length;
    const res = await h2request(h2!, '/api/plain', HOSTILE);
    assert.equal(res.status, 200);
    assertNothingUnchecked(backend.seen[before]!.headers, 'h2c /plain');
  });

  it('a WebSocket handshake: the same', async () => {
    const answer = await upgradeRequest(gw.url, '/api/socket', handshakeHeaders(HOSTILE));
    assert.equal(answer.status, 101);
    if (answer.kind === 'upgrade') answer.socket.destroy();
    assertNothingUnchecked(ws.upgrades.at(-1)!.headers, 'websocket');
  });

  it('a route that opts in to underscores gets them, but never a reserved name in that spelling', async () => {
    await (await request(`${gw.url}/api/open`, { headers: { ...HOSTILE, x_tenant_id: 't1' } })).body.text();
    const seen = backend.seen.at(-1)!;
    assert.equal(seen.headers.x_tenant_id, 't1');
    const names = new Set(Object.keys(seen.headers).map((n) => n.replaceAll('_', '-')));
    for (const name of NEVER_SEEN) assert.ok(!names.has(name), `${name} reached the backend`);
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
  });

  it('a method override in the query never reaches the backend; other parameters do', async () => {
    const res = await request(`${gw.url}/api/plain?_method=DELETE&a=1&%5Fmethod=PUT&_METHOD=PATCH`);
    await res.body.text();
    assert.equal(backend.seen.at(-1)!.url, '/plain?a=1');
  });
});
