/**
 * Admission control end to end (docs/overload.md): a backend that holds its answers until the test
 * lets them go, so exactly N requests are in flight; the next k get a fast 503 GW_OVERLOADED with
 * Retry-After, over HTTP/1.1 and HTTP/2, per route and for the whole gateway.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:http2';
import { request, Agent } from 'undici';
import { startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { h2request } from '../support/http2.js';
import { waitFor } from '../support/wait-for.js';
import { closeAll } from '../support/close-all.js';
import { adminRequest } from '../support/admin.js';
import { docExample } from '../support/doc-example.js';
import {
  handshakeHeaders,
  openWebSocket,
  startWsBackend,
  upgradeRequest,
  type WsBackend,
} from '../support/ws-backend.js';
import type { StatusDocument } from '../../src/admin/types.js';

/** Answers held by the backend, released by the test. */
const held: ServerResponse[] = [];
function releaseAll(): void {
  for (const res of held.splice(0)) res.end('{"ok":true}');
}

function config(backend: TestBackend, admission: string): string {
  return `
routes:
  - { method: GET, route: /hold, service: ${backend.host}, path: /hold }
  - { method: GET, route: /other, service: ${backend.host}, path: /hold, admission: { maxInFlight: 1 } }
  - { method: GET, route: /fast, service: ${backend.host}, path: /fast, admission: { maxInFlight: 1 } }
  - { method: GET, route: /events, service: ${backend.host}, path: /events, isSSE: true }
config:
${admission}
  http2: { cleartext: true }
  admin: { port: 0 }
`;
}

const agent = new Agent({ connections: null });
after(() => agent.close());
const send = async (gw: TestGateway, path: string) => {
  const res = await request(`${gw.url}/api${path}`, { dispatcher: agent });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
};

describe('admission control', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  const inFlightAtBackend = (path: string) => held.filter((r) => r.req.url === path).length;

  before(async () => {
    backend = await startBackend((req, res) => {
      if (req.url === '/fast') return res.end('{"fast":true}');
      if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: 1\n\n');
      }
      held.push(res);
    });
    gw = await startGateway(config(backend, '  admission: { maxInFlight: 3, retryAfterSec: 2 }'));
  });
  beforeEach(() => {
    releaseAll();
    gw.reload(config(backend, '  admission: { maxInFlight: 3, retryAfterSec: 2 }'));
  });
  after(async () => {
    releaseAll();
    await closeAll(gw, backend);
  });

  it('HTTP/1.1: N+k concurrent requests with a limit of N: N answered, exactly k fast 503s with Retry-After', async () => {
    const admitted = [1, 2, 3].map(() => send(gw, '/hold'));
    await waitFor(() => inFlightAtBackend('/hold') === 3, 5_000, 'three requests at the backend');
    const started = performance.now();
    const refused = await Promise.all([1, 2].map(() => send(gw, '/hold')));
    const refusedMs = performance.now() - started;
    for (const r of refused) {
      assert.equal(r.status, 503);
      assert.equal(r.headers['retry-after'], '2');
      assert.equal(r.headers['x-portico-error'], 'GW_OVERLOADED');
      assert.deepEqual(JSON.parse(r.text), {
        error: 'The gateway is serving as many requests as it may; retry later',
        success: false,
      });
    }
    // Refused while the admitted ones are still held: nothing waits for a slot.
    assert.equal(inFlightAtBackend('/hold'), 3, 'the refused requests never reached the backend');
    assert.ok(refusedMs < 2_000, `refused in ${refusedMs} ms`);
    releaseAll();
    assert.deepEqual(
      (await Promise.all(admitted)).map((r) => r.status),
      [200, 200, 200],
    );
  });

  it('a freed slot admits the next request', async () => {
    const admitted = [1, 2, 3].map(() => send(gw, '/hold'));
    await waitFor(() => inFlightAtBackend('/hold') === 3, 5_000, 'three requests at the backend');
    releaseAll();
    await Promise.all(admitted);
    const next = send(gw, '/hold');
    await waitFor(() => inFlightAtBackend('/hold') === 1, 5_000, 'the next request at the backend');
    releaseAll();
    assert.equal((await next).status, 200);
  });

  it("a route's own limit refuses only that route's requests", async () => {
    const first = send(gw, '/other');
    await waitFor(() => held.length === 1, 5_000, 'the first request at the backend');
    const second = await send(gw, '/other');
    assert.equal(second.status, 503);
    assert.equal(second.headers['x-portico-error'], 'GW_OVERLOADED');
    // Another route with a limit of its own still has its slot; the gateway limit (3) has room.
    assert.equal((await send(gw, '/fast')).status, 200);
    assert.equal((await send(gw, '/fast')).status, 200);
    const metrics = (await gw.get('/metrics')).text;
    assert.match(metrics, /^portico_admission_in_flight\{scope="route",route="GET \/other"\} 1$/m);
    assert.match(metrics, /^portico_admission_limit\{scope="route",route="GET \/other"\} 1$/m);
    assert.match(metrics, /^portico_admission_refused_total\{scope="route",route="GET \/other"\} 1$/m);
    assert.match(metrics, /^portico_admission_in_flight\{scope="gateway",route=""\} 1$/m);
    assert.match(metrics, /^portico_admission_limit\{scope="gateway",route=""\} 3$/m);
    const port = gw.gateway.adminAddress()!.port;
    const doc = (await adminRequest(port, '/api/status')).json() as StatusDocument;
    assert.equal(doc.admission.enabled, true);
    const [gateway, ...routes] = doc.admission.limits;
    // The gateway's refusals include the other tests'.
    assert.deepEqual({ ...gateway, refused: 0 }, { scope: 'gateway', route: '', inFlight: 1, limit: 3, refused: 0 });
    assert.deepEqual(routes, [
      { scope: 'route', route: 'GET /other', inFlight: 1, limit: 1, refused: 1 },
      { scope: 'route', route: 'GET /fast', inFlight: 0, limit: 1, refused: 0 },
    ]);
    releaseAll();
    assert.equal((await first).status, 200);
  });

  it('HTTP/2: N+k concurrent streams with a limit of N: N answered, exactly k 503s with Retry-After', async () => {
    const session = connect(gw.url);
    try {
      const admitted = [1, 2, 3].map(() => h2request(session, '/api/hold'));
      await waitFor(() => inFlightAtBackend('/hold') === 3, 5_000, 'three streams at the backend');
      const refused = await Promise.all([1, 2].map(() => h2request(session, '/api/hold')));
      for (const r of refused) {
        assert.equal(r.status, 503);
        assert.equal(r.headers['retry-after'], '2');
        assert.equal(r.headers['x-portico-error'], 'GW_OVERLOADED');
      }
      assert.equal(inFlightAtBackend('/hold'), 3);
      releaseAll();
      assert.deepEqual(
        (await Promise.all(admitted)).map((r) => r.status),
        [200, 200, 200],
      );
    } finally {
      session.close();
    }
  });

  it('a reload that raises the limit admits new requests beside the ones already in flight', async () => {
    gw.reload(config(backend, '  admission: { maxInFlight: 1 }'));
    const first = send(gw, '/hold');
    await waitFor(() => inFlightAtBackend('/hold') === 1, 5_000, 'the first request at the backend');
    const refused = await send(gw, '/hold');
    assert.equal(refused.status, 503);
    assert.equal(refused.headers['retry-after'], '1', 'the default Retry-After');
    gw.reload(config(backend, '  admission: { maxInFlight: 2 }'));
    const second = send(gw, '/hold');
    await waitFor(() => inFlightAtBackend('/hold') === 2, 5_000, 'the second request at the backend');
    // The request admitted before the reload still counts: 2 of 2.
    assert.equal((await send(gw, '/hold')).status, 503);
    releaseAll();
    assert.deepEqual([(await first).status, (await second).status], [200, 200]);
  });

  it('an open SSE stream holds no slot once its head is sent', async () => {
    gw.reload(config(backend, '  admission: { maxInFlight: 1 }'));
    const stream = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const u = new URL(`${gw.url}/api/events`);
      httpRequest({ host: u.hostname, port: u.port, path: u.pathname, agent: false }, resolve)
        .on('error', reject)
        .end();
    });
    assert.equal(stream.statusCode, 200);
    const other = send(gw, '/hold');
    await waitFor(() => inFlightAtBackend('/hold') === 1, 5_000, 'a request admitted beside the open stream');
    releaseAll();
    assert.equal((await other).status, 200);
    stream.destroy();
  });

  it('without any maxInFlight, nothing is refused', async () => {
    gw.reload(config(backend, '  admission: {}').replace(', admission: { maxInFlight: 1 }', ''));
    const many = [1, 2, 3, 4, 5].map(() => send(gw, '/hold'));
    await waitFor(() => inFlightAtBackend('/hold') === 5, 5_000, 'five requests at the backend');
    releaseAll();
    assert.deepEqual(
      (await Promise.all(many)).map((r) => r.status),
      [200, 200, 200, 200, 200],
    );
  });
});

describe('the example of docs/overload.md', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((_req, res) => void held.push(res));
    gw = await startGateway(docExample('overload.md', '## Configuration', backend.host));
  });
  after(async () => {
    releaseAll();
    await closeAll(gw, backend);
  });

  it("refuses the route past its own limit, then any route past the gateway's", async () => {
    const searches = [1, 2].map(() => send(gw, '/search'));
    await waitFor(() => held.length === 2, 5_000, 'two searches at the backend');
    assert.equal((await send(gw, '/search')).status, 503, 'the route limit: 2');
    const user = send(gw, '/users/1');
    await waitFor(() => held.length === 3, 5_000, 'a user request beside the searches');
    const refused = await send(gw, '/users/2');
    assert.equal(refused.status, 503, 'the gateway limit: 3');
    assert.equal(refused.headers['retry-after'], '1');
    releaseAll();
    assert.deepEqual(
      (await Promise.all([...searches, user])).map((r) => r.status),
      [200, 200, 200],
    );
  });
});

describe('admission control of WebSocket handshakes', () => {
  let backend: TestBackend;
  let ws: WsBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((_req, res) => void held.push(res));
    ws = await startWsBackend();
    gw = await startGateway(`
routes:
  - { method: GET, route: /hold, service: ${backend.host}, path: /hold }
  - { method: GET, route: /chat, service: ${ws.host}, path: /echo, isWebSocket: true, admission: { maxInFlight: 1 } }
config:
  admission: { maxInFlight: 2 }
`);
  });
  after(async () => {
    releaseAll();
    await closeAll(gw, ws, backend);
  });

  it('an open tunnel holds no slot; a handshake past a limit gets 503 with Retry-After', async () => {
    const url = gw.url.replace('http:', 'ws:');
    const first = await openWebSocket(`${url}/api/chat`);
    const second = await openWebSocket(`${url}/api/chat`);
    // Two open tunnels on a route limited to 1, in a gateway limited to 2: both plain requests pass.
    const plain = [1, 2].map(() => send(gw, '/hold'));
    await waitFor(() => held.length === 2, 5_000, 'two plain requests beside two tunnels');
    const refused = await upgradeRequest(gw.url, '/api/chat', handshakeHeaders({ host: 'gw' }));
    assert.equal(refused.kind, 'response');
    assert.equal(refused.status, 503);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers['x-portico-error'], 'GW_OVERLOADED');
    releaseAll();
    assert.deepEqual(
      (await Promise.all(plain)).map((r) => r.status),
      [200, 200],
    );
    first.ws.close();
    second.ws.close();
  });
});

describe('admission control of routes that share an id on different hosts', () => {
  let backend: TestBackend;
  let gw: TestGateway;
  before(async () => {
    backend = await startBackend((_req, res) => void held.push(res));
    gw = await startGateway(`
routes:
  - { method: GET, route: /a, hosts: [a.example.com], service: ${backend.host}, path: /a, admission: { maxInFlight: 1 } }
  - { method: GET, route: /a, hosts: [b.example.com], service: ${backend.host}, path: /b, admission: { maxInFlight: 1 } }
`);
  });
  after(async () => {
    releaseAll();
    await closeAll(gw, backend);
  });

  it('each has a count of its own', async () => {
    const onHost = async (host: string) => {
      const res = await request(`${gw.url}/api/a`, { dispatcher: agent, headers: { host } });
      await res.body.dump();
      return res.statusCode;
    };
    const a = onHost('a.example.com');
    await waitFor(() => held.length === 1, 5_000, 'the request for a.example.com at the backend');
    assert.equal(await onHost('a.example.com'), 503);
    const b = onHost('b.example.com');
    await waitFor(() => held.length === 2, 5_000, 'the request for b.example.com admitted beside it');
    const metrics = (await gw.get('/metrics')).text;
    assert.match(metrics, /^portico_admission_refused_total\{scope="route",route="GET \/a a\.example\.com"\} 1$/m);
    assert.match(metrics, /^portico_admission_in_flight\{scope="route",route="GET \/a b\.example\.com"\} 1$/m);
    releaseAll();
    assert.deepEqual(await Promise.all([a, b]), [200, 200]);
  });
});
