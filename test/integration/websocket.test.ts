import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { closedPort, rawRequest, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/wait-for.js';
import { bounded, handshakeHeaders, openWebSocket, startWsBackend, upgradeRequest } from '../support/ws-backend.js';
import type { WsBackend } from '../support/ws-backend.js';
import { closeAll } from '../support/close-all.js';
import { assertErrorHead } from '../support/error-answer.js';

/** The next message a client receives, with its kind (bounded). */
function nextMessage(ws: WebSocket, ms = 3_000): Promise<{ data: Buffer; isBinary: boolean }> {
  return bounded(
    new Promise((resolve) => ws.once('message', (data: Buffer, isBinary) => resolve({ data, isBinary }))),
    ms,
    'message',
  );
}

/** The close a client sees (bounded). */
function closed(ws: WebSocket, ms = 3_000): Promise<{ code: number; reason: string }> {
  return bounded(
    new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') }))),
    ms,
    'client close',
  );
}

describe('WebSocket routes tunnel the connection to the backend', () => {
  let backend: WsBackend;
  let httpBackend: TestBackend;
  let gw: TestGateway;
  let silent: Server;
  let wsUrl: string;

  const yaml = (extraRoutes = '') => `
routes:
  - { method: GET, route: /echo, service: ${backend.host}, path: /echo, isWebSocket: true }
  - { method: GET, route: "/rooms/{room}", service: http://${backend.host}, path: "/ws/{room}?v=1", isWebSocket: true }
  - { method: GET, route: /refused, service: ${backend.host}, path: /refuse, isWebSocket: true }
  - { method: GET, route: /down, service: 127.0.0.1:${downPort}, path: /echo, isWebSocket: true }
  - { method: GET, route: /silent, service: 127.0.0.1:${(silent.address() as AddressInfo).port}, path: /echo,
      isWebSocket: true }
  - { method: GET, route: /plain, service: ${httpBackend.host}, path: /plain }
  - { method: POST, route: /post-only, service: ${httpBackend.host}, path: /plain }
${extraRoutes}
config:
  timeouts:
    backendSec: 0.5
`;
  let downPort: number;

  before(async () => {
    backend = await startWsBackend();
    httpBackend = await startBackend();
    downPort = await closedPort();
    // Accepts TCP and never answers: an upgrade that hangs. It reads (and drops) what it gets,
    // so it sees the gateway's FIN and its socket closes.
    silent = createServer((socket) => socket.resume());
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    gw = await startGateway(yaml());
    wsUrl = gw.url.replace('http:', 'ws:');
  });
  after(async () => {
    await gw?.close();
    await backend?.close();
    await httpBackend?.close();
    await new Promise((r) => silent?.close(r));
  });

  it('echoes text and binary messages, each kept as sent', async () => {
    const { ws, headers } = await openWebSocket(`${wsUrl}/api/echo`);
    assert.equal(typeof headers['x-request-id'], 'string');
    ws.send('hello');
    const text = await nextMessage(ws);
    assert.equal(text.isBinary, false);
    assert.equal(text.data.toString('utf8'), 'hello');
    const bytes = Buffer.from([0, 1, 2, 253, 254, 255]);
    ws.send(bytes);
    const binary = await nextMessage(ws);
    assert.equal(binary.isBinary, true);
    assert.deepEqual(binary.data, bytes);
    const big = Buffer.alloc(256 * 1024, 9);
    ws.send(big);
    assert.deepEqual((await nextMessage(ws)).data, big);
    ws.close();
    await closed(ws);
  });

  it('passes ping and pong through', async () => {
    const { ws } = await openWebSocket(`${wsUrl}/api/echo`);
    const pong = bounded(new Promise<Buffer>((r) => ws.once('pong', r)), 3_000, 'pong');
    ws.ping('are-you-there');
    assert.equal((await pong).toString('utf8'), 'are-you-there');
    ws.close();
    await closed(ws);
  });

  it('sends path parameters and the client query to the backend path, with end-to-end and gateway headers', async () => {
    const before = backend.upgrades.length;
    const { ws, headers } = await openWebSocket(`${wsUrl}/api/rooms/a%20b?token=x&n=1`, ['superchat', 'chat'], {
      headers: { cookie: 'session=abc', 'x-request-id': 'req-ws-1', origin: 'https://app.example', 'x-custom': 'kept' },
    });
    assert.equal(ws.protocol, 'chat', 'the backend chose the subprotocol');
    assert.equal(headers['x-request-id'], 'req-ws-1');
    assert.equal(backend.upgrades.length, before + 1);
    const seen = backend.upgrades.at(-1)!;
    assert.equal(seen.url, '/ws/a%20b?v=1&token=x&n=1');
    assert.equal(seen.headers.host, backend.host);
    assert.equal(seen.headers.cookie, 'session=abc');
    assert.equal(seen.headers.origin, 'https://app.example');
    assert.equal(seen.headers['x-custom'], 'kept');
    assert.equal(seen.headers['sec-websocket-protocol'], 'superchat,chat');
    assert.equal(seen.headers['sec-websocket-version'], '13');
    assert.match(seen.headers['sec-websocket-extensions'] ?? '', /permessage-deflate/);
    assert.equal(typeof seen.headers['sec-websocket-key'], 'string');
    assert.equal(seen.headers['x-request-id'], 'req-ws-1');
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.equal(seen.headers['x-forwarded-host'], `127.0.0.1:${gw.port}`);
    assert.equal(seen.headers.upgrade, 'websocket');
    assert.equal(seen.headers.connection, 'Upgrade');
    ws.send('in the room');
    assert.equal((await nextMessage(ws)).data.toString('utf8'), 'in the room');
    ws.close();
    await closed(ws);
  });

  it('relays a close from the backend to the client with its code and reason', async () => {
    const { ws } = await openWebSocket(`${wsUrl}/api/echo`);
    const clientSaw = closed(ws);
    const backendSaw = backend.nextClose();
    ws.send('close:4001:bye');
    assert.deepEqual(await clientSaw, { code: 4001, reason: 'bye' });
    assert.deepEqual(await backendSaw, { code: 4001, reason: 'bye' });
  });

  it('relays a close from the client to the backend with its code and reason', async () => {
    const { ws } = await openWebSocket(`${wsUrl}/api/echo`);
    const backendSaw = backend.nextClose();
    ws.close(4002, 'see you');
    assert.deepEqual(await backendSaw, { code: 4002, reason: 'see you' });
    assert.deepEqual(await closed(ws), { code: 4002, reason: 'see you' });
  });

  it('closes the client when the backend connection dies without a close frame', async () => {
    const accepted = backend.nextConnection();
    const { ws } = await openWebSocket(`${wsUrl}/api/echo`);
    (await accepted).terminate();
    assert.equal((await closed(ws)).code, 1006);
  });

  it('closes the backend when the client connection dies without a close frame', async () => {
    const accepted = backend.nextConnection();
    const { ws } = await openWebSocket(`${wsUrl}/api/echo`);
    await accepted;
    const backendSaw = backend.nextClose();
    ws.terminate();
    assert.equal((await backendSaw).code, 1006);
  });

  it('keeps a tunnel open longer than every configured timeout (backendSec 0.5, idle 1.5 s)', async () => {
    const { ws } = await openWebSocket(`${wsUrl}/api/echo`);
    let closedEarly = false;
    ws.once('close', () => (closedEarly = true));
    // A timer-driven behaviour: the tunnel must outlive every timeout, so wait past them.
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(closedEarly, false);
    ws.send('still here');
    assert.equal((await nextMessage(ws)).data.toString('utf8'), 'still here');
    ws.close();
    await closed(ws);
  });

  it('applies backpressure: a client that stops reading makes the backend buffer, not the gateway', async () => {
    const accepted = backend.nextConnection();
    const { ws } = await openWebSocket(`${wsUrl}/api/echo`);
    const server = await accepted;
    ws.pause();
    const n = 96;
    ws.send(`flood:${n}`);
    // The gateway stops reading the backend once the client socket is full: the backend's own
    // send buffer then holds most of the 96 MiB instead of the gateway's memory.
    await waitFor(() => server.bufferedAmount >= 32 * 1024 * 1024, 5_000, 'the backend buffering 32 MiB');
    assert.ok(server.bufferedAmount >= 32 * 1024 * 1024, `backend buffered only ${server.bufferedAmount} bytes`);
    let received = 0;
    const all = bounded(
      new Promise<void>((resolve) =>
        ws.on('message', (data: Buffer) => {
          received += data.length;
          if (received === n * 1024 * 1024) resolve();
        }),
      ),
      20_000,
      'all messages',
    );
    ws.resume();
    await all;
    assert.equal(received, n * 1024 * 1024);
    ws.close();
    await closed(ws);
  });

  it('answers 426 JSON to a plain GET without Upgrade', async () => {
    const res = await rawRequest(gw.url, '/api/echo');
    assert.equal(res.status, 426);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers.upgrade, 'websocket');
    assert.equal(res.headers['x-portico-error'], 'GW_UPGRADE_REQUIRED');
    assert.deepEqual(JSON.parse(res.body), { error: 'This route only accepts WebSocket upgrades', success: false });
  });

  it('answers 502 JSON when the backend is unreachable', async () => {
    const res = await upgradeRequest(gw.url, '/api/down', handshakeHeaders());
    assert.equal(res.kind, 'response');
    assert.equal(res.status, 502);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['x-portico-error'], 'GW_UPSTREAM_UNREACHABLE');
    assert.equal(res.headers.connection, 'close');
    assert.equal(typeof res.headers['x-request-id'], 'string');
    assert.deepEqual(JSON.parse(res.body), { error: 'Backend service unreachable', success: false });
  });

  it('answers 504 JSON when the backend does not answer the upgrade within backendSec', async () => {
    const started = Date.now();
    const res = await upgradeRequest(gw.url, '/api/silent', handshakeHeaders());
    assert.equal(res.status, 504);
    assert.equal(res.kind === 'response' && res.headers['x-portico-error'], 'GW_UPSTREAM_TIMEOUT');
    assert.ok(Date.now() - started < 3_000);
  });

  it('relays a backend that refuses the upgrade: status, headers and body, then closes', async () => {
    const res = await upgradeRequest(gw.url, '/api/refused', handshakeHeaders({ 'x-request-id': 'refused-1' }));
    assert.equal(res.kind, 'response');
    if (res.kind !== 'response') return;
    assert.equal(res.status, 403);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['x-backend'], 'refused');
    assert.equal(res.headers['x-request-id'], 'refused-1');
    assert.equal(res.headers['x-portico-error'], undefined);
    assert.deepEqual(JSON.parse(res.body), { error: 'not allowed here', success: false });
    await bounded(res.closed, 3_000, 'connection close');
  });

  const refusals = [
    {
      name: 'no route for the path: 404',
      path: '/api/nowhere',
      headers: handshakeHeaders(),
      status: 404,
      code: 'GW_ROUTE_NOT_FOUND',
    },
    {
      name: 'a path with only a POST route: 405 with Allow',
      path: '/api/post-only',
      headers: handshakeHeaders(),
      status: 405,
      code: 'GW_METHOD_NOT_ALLOWED',
      allow: 'POST',
    },
    // Other upgrades are served as plain requests: test/integration/upgrade-fallback.test.ts.
    {
      name: 'an upgrade to another protocol (h2c) on a WebSocket route: 426',
      path: '/api/echo',
      headers: { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c', 'http2-settings': 'AAMAAABkAARAAAAAAAIAAAAA' },
      status: 426,
      code: 'GW_UPGRADE_REQUIRED',
    },
  ];
  for (const c of refusals) {
    it(`answers without contacting any backend: ${c.name}`, async () => {
      const before = backend.upgrades.length;
      const plainBefore = httpBackend.seen.length;
      const res = await upgradeRequest(gw.url, c.path, c.headers);
      assert.equal(res.kind, 'response');
      if (res.kind !== 'response') return;
      assertErrorHead(res, c.status, c.code);
      assert.equal(res.headers.allow, c.allow);
      assert.equal(JSON.parse(res.body).success, false);
      assert.equal(backend.upgrades.length, before);
      assert.equal(httpBackend.seen.length, plainBefore);
    });
  }

  it('logs each upgrade with request id, route and status', async () => {
    const { ws } = await openWebSocket(`${wsUrl}/api/echo`, undefined, { headers: { 'x-request-id': 'log-me' } });
    ws.close();
    await closed(ws);
    const line = gw.logs.find((l) => l.reqId === 'log-me' && l.msg === 'request');
    assert.ok(line, 'request log line');
    assert.equal(line.status, 101);
    assert.equal(line.route, 'GET /echo');
  });

  it('routes new upgrades on the reloaded table while an open tunnel keeps working', async () => {
    const { ws } = await openWebSocket(`${wsUrl}/api/echo`);
    gw.reload(
      yaml(`  - method: GET
    route: /echo2
    service: ${backend.host}
    path: /echo
    isWebSocket: true`),
    );
    try {
      const { ws: ws2 } = await openWebSocket(`${wsUrl}/api/echo2`);
      ws2.send('new route');
      assert.equal((await nextMessage(ws2)).data.toString('utf8'), 'new route');
      ws2.close();
      await closed(ws2);
      ws.send('old tunnel');
      assert.equal((await nextMessage(ws)).data.toString('utf8'), 'old tunnel');
    } finally {
      ws.close();
      await closed(ws);
      gw.reload(yaml());
    }
  });
});

describe('gateway shutdown closes open tunnels', () => {
  it('close() sends each client a close frame 1001, which reaches the backend from the client, and resolves', async () => {
    const backend = await startWsBackend();
    const gw = await startGateway(`
routes:
  - { method: GET, route: /echo, service: ${backend.host}, path: /echo, isWebSocket: true }
`);
    try {
      const { ws } = await openWebSocket(`${gw.url.replace('http:', 'ws:')}/api/echo`);
      const clientClosed = closed(ws, 5_000);
      const backendClosed = backend.nextClose(5_000);
      const started = Date.now();
      await bounded(gw.close(), 5_000, 'gateway close');
      assert.ok(Date.now() - started < 1_000, 'the close handshake does not hold the drain');
      assert.equal((await clientClosed).code, 1001);
      assert.equal((await backendClosed).code, 1001);
    } finally {
      await closeAll(gw, backend);
    }
  });
});
