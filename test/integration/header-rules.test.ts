/**
 * Header rules (`headers.request` / `headers.response` on a route) end to end with a real backend:
 * what the backend receives and what the client gets, on a plain route, a mapped route, an SSE
 * route and a WebSocket upgrade; `{param}` and `{claims.NAME}` filled per request; a value that
 * cannot be a header is not sent; `portico check` refuses what would break the gateway's own rules.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { handshakeHeaders, startWsBackend, upgradeRequest, type WsBackend } from '../support/ws-backend.js';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';
import { closeAll } from '../support/close-all.js';
import { hs256Signer } from '../support/tokens.js';

const SECRET = 'header-rules-test-secret-0123456789abcdef';
const sign = hs256Signer(SECRET, { expiresIn: '5m' });

describe('headers: request and response rules', () => {
  let backend: TestBackend;
  let users: TestBackend;
  let ws: WsBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((req, res) => {
      if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'x-internal': 'secret' });
        res.end('data: one\n\n');
        return;
      }
      if (req.url?.startsWith('/orders'))
        return json(res, 200, [{ id: 1, userId: 'u1' }], { 'x-internal': 'secret', server: 'backend/1.0' });
      return json(res, 200, { ok: true }, { 'x-internal': 'secret', server: 'backend/1.0', 'x-powered-by': 'php' });
    });
    users = await startBackend((req, res) => json(res, 200, { name: `user ${req.url}` }));
    ws = await startWsBackend();
    gw = await startGateway(`
config:
  auth:
    secret: ${SECRET}
routes:
  - method: GET
    route: /tenants/{tenant}/items
    service: ${backend.host}
    path: /items/{tenant}
    protected: true
    headers:
      request:
        set:
          X-Tenant: "{tenant}"
          X-Caller: "user:{claims.sub}"
          X-Org: "{claims.org.id}"
          X-Groups: "{claims.groups}"
          X-Missing: "{claims.nothere}"
          X-Api-Version: "2"
        remove: [Cookie, X-Debug]
      response:
        set:
          Cache-Control: "no-store"
          X-Served-For: "{tenant}"
        remove: [X-Internal, Server, x-powered-by]
  - { method: GET, route: "/public/{name}", service: ${backend.host}, path: "/public/{name}",
      headers: { request: { set: { X-Name: "{name}" } } } }
  - { method: GET, route: /orders, service: ${backend.host}, path: /orders, public: true,
      mapping: [{ path: "/users/{userId}", service: ${users.host}, tag: user }],
      headers: { request: { set: { X-From: gateway } }, response: { remove: [X-Internal], set: { X-Mapped: "yes" } } } }
  - { method: GET, route: /events, service: ${backend.host}, path: /events, public: true, isSSE: true,
      headers: { request: { set: { X-Stream: "1" } }, response: { remove: [X-Internal] } } }
  - { method: GET, route: "/chat/{room}", service: ${ws.host}, path: "/chat/{room}", public: true, isWebSocket: true,
      headers: { request: { set: { X-Room: "{room}" }, remove: [Cookie] }, response: { set: { X-Tunnel: "{room}" } } } }
`);
  });
  after(() => closeAll(gw, backend, users, ws));

  const seenAt = (prefix: string) => {
    const r = backend.seen.filter((s) => s.url.startsWith(prefix)).at(-1);
    assert.ok(r, `the backend saw no request to ${prefix}`);
    return r;
  };

  it('sets and removes request headers, filled from the path and the token', async () => {
    const token = await sign({ sub: 'u-7', org: { id: 'acme' }, groups: ['a', 'b'] });
    const res = await request(`${gw.url}/api/tenants/t%201/items`, {
      headers: {
        authorization: `Bearer ${token}`,
        cookie: 'sid=1',
        'x-debug': 'on',
        'x-tenant': 'forged',
        'x-missing': 'from-client',
        accept: 'application/json',
      },
    });
    await res.body.text();
    assert.equal(res.statusCode, 200);
    const seen = seenAt('/items');
    assert.equal(seen.headers['x-tenant'], 't 1');
    assert.equal(seen.headers['x-caller'], 'user:u-7');
    assert.equal(seen.headers['x-org'], 'acme');
    assert.equal(seen.headers['x-groups'], 'a,b');
    assert.equal(seen.headers['x-api-version'], '2');
    // A placeholder without a value leaves the header unset, and the client's copy is gone too.
    assert.equal(seen.headers['x-missing'], undefined);
    assert.equal(seen.headers.cookie, undefined);
    assert.equal(seen.headers['x-debug'], undefined);
    assert.equal(seen.headers.accept, 'application/json');
    assert.ok(seen.headers['x-request-id'], 'the gateway still sends its own headers');
  });

  it('sets and removes response headers', async () => {
    const token = await sign({ sub: 'u-7' });
    const res = await request(`${gw.url}/api/tenants/blue/items`, { headers: { authorization: `Bearer ${token}` } });
    assert.deepEqual(await res.body.json(), { ok: true });
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-served-for'], 'blue');
    assert.equal(res.headers['x-internal'], undefined);
    assert.equal(res.headers.server, undefined);
    assert.equal(res.headers['x-powered-by'], undefined);
    assert.ok(res.headers['x-request-id']);
  });

  it('a gateway error is not a backend answer: response rules do not apply to it', async () => {
    const res = await request(`${gw.url}/api/tenants/blue/items`);
    await res.body.text();
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['cache-control'], undefined);
  });

  it('a substituted value that cannot be a header is not sent', async () => {
    const res = await request(`${gw.url}/api/public/a%0d%0aX-Evil:%201`);
    await res.body.text();
    assert.equal(res.statusCode, 200);
    const seen = seenAt('/public');
    assert.equal(seen.headers['x-name'], undefined);
    assert.equal(seen.headers['x-evil'], undefined);
    const ok = await request(`${gw.url}/api/public/caf%C3%A9`);
    await ok.body.text();
    assert.equal(seenAt('/public').headers['x-name'], Buffer.from('café', 'utf8').toString('latin1'));
  });

  it('applies on a mapped route: the primary call and the enriched answer', async () => {
    const res = await request(`${gw.url}/api/orders`);
    assert.deepEqual(await res.body.json(), [{ id: 1, userId: 'u1', user: { name: 'user /users/u1' } }]);
    assert.equal(res.headers['x-mapped'], 'yes');
    assert.equal(res.headers['x-internal'], undefined);
    assert.equal(seenAt('/orders').headers['x-from'], 'gateway');
    // The rules are the route's: the mapping service's call is not edited.
    assert.equal(users.seen.at(-1)?.headers['x-from'], undefined);
  });

  it('applies on an SSE route', async () => {
    const res = await request(`${gw.url}/api/events`);
    assert.equal(await res.body.text(), 'data: one\n\n');
    assert.equal(res.headers['x-internal'], undefined);
    assert.equal(seenAt('/events').headers['x-stream'], '1');
  });

  it('applies on a WebSocket upgrade: the handshake to the backend and the 101', async () => {
    const answer = await upgradeRequest(gw.url, '/api/chat/r42', handshakeHeaders({ cookie: 'sid=1' }));
    assert.equal(answer.kind, 'upgrade');
    if (answer.kind === 'upgrade') answer.socket.destroy();
    assert.equal(answer.headers['x-tunnel'], 'r42');
    const seen = ws.upgrades.at(-1);
    assert.equal(seen?.headers['x-room'], 'r42');
    assert.equal(seen?.headers.cookie, undefined);
  });
});

describe('portico check: header rules', () => {
  const problems = (routeExtra: string, auth = '') => {
    const r = loadConfigText(
      `${auth}
routes:
  - method: GET
    route: /items/{id}
    service: 127.0.0.1:9
    path: /items/{id}
${routeExtra}`,
      'g.yaml',
      {},
    );
    return r.ok ? [] : r.problems.map(formatProblem);
  };

  it('accepts valid rules', () => {
    assert.deepEqual(
      problems(`    headers:
      request:
        set: { X-Item: "item-{id}" }
        remove: [Cookie]
      response:
        set: { Cache-Control: no-store }`),
      [],
    );
  });

  it('refuses an unknown parameter, with a did-you-mean, at its line and column', () => {
    assert.deepEqual(
      problems(`    headers:
      request:
        set: { X-Item: "{idd}" }`),
      [
        'g.yaml:9:24: routes[0].headers.request.set.X-Item: {idd} is not a parameter of route "/items/{id}" (did you mean {id}?)',
      ],
    );
  });

  it('refuses claims on a public route', () => {
    const out = problems(`    headers:
      request:
        set:
          X-User: "{claims.sub}"`);
    assert.equal(out.length, 1);
    assert.match(out[0]!, /^g\.yaml:10:19: .*X-User: \{claims\.sub\} needs a token, but the route is public/);
  });

  it('accepts claims once the route is protected', () => {
    assert.deepEqual(
      problems(
        `    protected: true
    headers:
      request:
        set:
          X-User: "{claims.sub}"`,
        `config:
  auth:
    secret: ${SECRET}`,
      ),
      [],
    );
  });

  it('refuses headers the gateway owns, bad names, set-and-remove, and malformed placeholders', () => {
    const out = problems(`    headers:
      request:
        set:
          Host: example.com
          "Bad Name": x
          X-A: "{id"
          X-B: "{claims.}"
        remove: [X-Request-ID, Content-Length, X-C, X-A]
      response:
        set: { Transfer-Encoding: gzip }
        remove: [Connection]`);
    const text = out.join('\n');
    assert.match(text, /headers\.request\.set: cannot set Host: the gateway sets it itself/);
    assert.match(text, /headers\.request\.set: "Bad Name" is not a valid header name/);
    assert.match(text, /headers\.request\.set\.X-A: an unmatched brace/);
    assert.match(text, /headers\.request\.set\.X-B: "\{claims\.\}" is neither \{param\} nor \{claims\.NAME\}/);
    assert.match(text, /headers\.request\.remove: cannot remove X-Request-ID/);
    assert.match(text, /headers\.request\.remove: cannot remove Content-Length/);
    assert.match(text, /headers\.request\.remove: X-A is also in set/);
    assert.match(text, /headers\.response\.set: cannot set Transfer-Encoding/);
    assert.match(text, /headers\.response\.remove: cannot remove Connection/);
    assert.equal(out.length, 9, text);
  });

  it('refuses unknown keys under headers with a did-you-mean', () => {
    const out = problems(`    headers:
      requests:
        set: { X-A: b }`);
    assert.equal(out.length, 1);
    assert.match(out[0]!, /^g\.yaml:8:7: .*unknown key "requests" \(did you mean "request"\?\)/);
  });
});
