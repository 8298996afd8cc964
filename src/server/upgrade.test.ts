import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Duplex } from 'node:stream';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { loadConfigText } from '../config/load.js';
import { compileRoutes } from '../pipeline/compile-route.js';
import type { CompiledConfig } from '../config/types.js';
import { createRouteTable, type RouteEntry } from '../router/route-table.js';
import { createEventBus, type GatewayEvents } from '../observability/events.js';
import { createLogger } from '../observability/logger.js';
import type { Exchange, Step } from '../pipeline/types.js';
import { createUpgradeHandler, isWebSocketUpgrade } from './upgrade.js';
import { createRequestHandler } from './http-server.js';
import { switchProtocols } from './socket-response.js';
import { GatewayResponse } from './gateway-response.js';
import { RecordingSocket } from '../../test/support/recording-socket.js';
import { createTracer } from '../observability/trace-context.js';

function fakeRequest(url: string, headers: Record<string, string>, method = 'GET'): IncomingMessage {
  const all = { host: 'gw', ...headers };
  return {
    url,
    method,
    headers: all,
    rawHeaders: Object.entries(all).flat(),
    httpVersionMajor: 1,
    httpVersionMinor: 1,
    socket: {},
    resume() {},
  } as unknown as IncomingMessage;
}

const WS = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-key': 'k', 'sec-websocket-version': '13' };

function compile(yaml: string): CompiledConfig {
  const r = loadConfigText(yaml, 'unit.yaml', {});
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.config;
}

function setup(options: { draining?: boolean } = {}) {
  const config = compile(`
routes:
  - { method: GET, route: "/rooms/{room}", service: "127.0.0.1:1", path: "/ws/{room}", isWebSocket: true }
  - { method: GET, route: /plain, service: "127.0.0.1:1", path: /plain }
  - { method: POST, route: /post-only, service: "127.0.0.1:1", path: /p }
`);
  const calls: Exchange[] = [];
  // The WebSocket route's pipeline stands for the websocket endpoint: it switches protocols.
  const upgrade: Step = async (ex) => {
    calls.push(ex);
    switchProtocols(ex, ['upgrade', 'websocket'], undefined);
  };
  const entries: RouteEntry[] = compileRoutes(config).routes.map((route) => ({
    route,
    run: route.kind === 'websocket' ? upgrade : async () => {},
  }));
  const table = createRouteTable(entries);
  const events = createEventBus();
  const ends: GatewayEvents['request:end'][] = [];
  events.on('request:end', (e) => ends.push(e));
  const served: { req: IncomingMessage; socket: Duplex; head: Buffer }[] = [];
  const logger = createLogger({ level: 'silent' });
  const handler = createUpgradeHandler({
    current: () => table,
    logger,
    handler: createRequestHandler({
      current: () => table,
      events,
      logger,
      tracer: createTracer(),
      isDraining: () => options.draining === true,
      inFlight: { count: 0 },
    }),
    Response: GatewayResponse,
    serveAsRequest: (req, socket, head) => void served.push({ req, socket, head }),
  });
  return { handler, calls, ends, served };
}

describe('isWebSocketUpgrade', () => {
  it('accepts GET with Upgrade: websocket in any case, nothing else', () => {
    assert.equal(isWebSocketUpgrade(fakeRequest('/', { upgrade: 'WebSocket' })), true);
    assert.equal(isWebSocketUpgrade(fakeRequest('/', { upgrade: 'h2c' })), false);
    assert.equal(isWebSocketUpgrade(fakeRequest('/', { upgrade: 'websocket' }, 'POST')), false);
    assert.equal(isWebSocketUpgrade(fakeRequest('/', {})), false);
  });
});

describe('createUpgradeHandler', () => {
  const plain = [
    {
      name: 'a non-WebSocket upgrade (h2c) on a WebSocket route',
      url: '/api/rooms/1',
      headers: { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c' },
    },
    { name: 'a WebSocket handshake with another method', url: '/api/rooms/1', headers: WS, method: 'POST' },
    { name: 'a WebSocket handshake for an unknown path', url: '/api/nowhere', headers: WS },
    { name: 'a WebSocket handshake for a path without a GET route', url: '/api/post-only', headers: WS },
    { name: 'a WebSocket handshake for a route that is not isWebSocket', url: '/api/plain', headers: WS },
  ];
  for (const c of plain) {
    it(`hands ${c.name} to the request handler, untouched, with its head bytes`, () => {
      const { handler, calls, ends, served } = setup();
      const socket = new RecordingSocket();
      const req = fakeRequest(c.url, c.headers, c.method);
      const head = Buffer.from('body');
      handler(req, socket, head);
      assert.equal(served.length, 1);
      assert.equal(served[0]!.req, req);
      assert.equal(served[0]!.socket, socket);
      assert.equal(served[0]!.head, head);
      assert.equal(socket.written.length, 0);
      assert.equal(calls.length, 0);
      assert.equal(ends.length, 0, 'the request handler reports it');
      assert.equal(handler.open(), 0);
    });
  }

  it('hands a non-WebSocket upgrade to the request handler while draining too', () => {
    const { handler, served } = setup({ draining: true });
    handler(
      fakeRequest('/api/plain', { connection: 'Upgrade', upgrade: 'h2c' }),
      new RecordingSocket(),
      Buffer.alloc(0),
    );
    assert.equal(served.length, 1);
  });

  it('answers a WebSocket handshake for a WebSocket route 503 JSON while draining', async () => {
    const { handler, calls, ends, served } = setup({ draining: true });
    const socket = new RecordingSocket();
    handler(fakeRequest('/api/rooms/1', { ...WS, 'x-request-id': 'r-1' }), socket, Buffer.alloc(0));
    await once(socket, 'close');
    const text = socket.text();
    assert.ok(text.startsWith('HTTP/1.1 503 Service Unavailable\r\n'), text);
    assert.match(text, /\r\nx-portico-error: GW_GATEWAY_DRAINING\r\n/);
    assert.match(text, /\r\nx-request-id: r-1\r\n/);
    assert.match(text, /\r\n\r\n\{"error":"Gateway is shutting down","success":false\}$/);
    assert.equal(calls.length, 0);
    assert.equal(served.length, 0);
    assert.equal(ends.length, 1);
    assert.equal(ends[0]!.errorCode, 'GW_GATEWAY_DRAINING');
    assert.equal(ends[0]!.routeId, 'GET /rooms/{room}');
  });

  it('hands a WebSocket route its exchange: route, decoded params, raw query, request id, head bytes', async () => {
    const { handler, calls, ends } = setup();
    const socket = new RecordingSocket();
    const head = Buffer.from('early');
    handler(fakeRequest('/api/rooms/a%20b?x=1&y=2', { ...WS, 'x-request-id': 'r-2' }), socket, head);
    await new Promise((r) => setImmediate(r));
    assert.equal(calls.length, 1);
    const ex = calls[0]!;
    assert.equal(ex.route.id, 'GET /rooms/{room}');
    assert.deepEqual({ ...ex.params }, { room: 'a b' });
    assert.equal(ex.rawQuery, 'x=1&y=2');
    assert.equal(ex.requestId, 'r-2');
    assert.equal(ex.upgrade?.head, head);
    assert.equal(ex.upgrade?.switched, true);
    assert.ok(socket.text().startsWith('HTTP/1.1 101 Switching Protocols\r\n'), socket.text());
    assert.equal(ends.length, 1);
    assert.equal(ends[0]!.status, 101);
    assert.equal(ends[0]!.routeId, 'GET /rooms/{room}');
    assert.equal(ends[0]!.aborted, false);
  });

  it('closeAll destroys every socket it holds', async () => {
    const { handler } = setup();
    const socket = new RecordingSocket();
    handler(fakeRequest('/api/rooms/1', WS), socket, Buffer.alloc(0));
    await new Promise((r) => setImmediate(r));
    assert.equal(handler.open(), 1);
    handler.closeAll();
    assert.equal(socket.destroyed, true);
    assert.equal(handler.open(), 0);
  });
});
