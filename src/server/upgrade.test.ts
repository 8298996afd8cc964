import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { loadConfigText, type CompiledConfig } from '../config/compile.js';
import { createRouteTable } from '../router/route-table.js';
import { createEventBus, type GatewayEvents } from '../observability/events.js';
import { createLogger } from '../observability/logger.js';
import type { UpgradeExchange, UpgradeStep } from '../stream/websocket.js';
import { createUpgradeHandler, isWebSocketUpgrade, type UpgradeRouteEntry } from './upgrade.js';

class RecordingSocket extends Duplex {
  readonly written: Buffer[] = [];
  override _read(): void {}
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.written.push(Buffer.from(chunk));
    cb();
  }
  override _final(cb: () => void): void {
    this.push(null);
    cb();
  }
  text(): string {
    return Buffer.concat(this.written).toString('utf8');
  }
}

function fakeRequest(url: string, headers: Record<string, string>, method = 'GET'): IncomingMessage {
  return { url, method, headers } as unknown as IncomingMessage;
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
  const calls: UpgradeExchange[] = [];
  const upgrade: UpgradeStep = async (ux) => {
    calls.push(ux);
    ux.status = 101;
  };
  const entries: UpgradeRouteEntry[] = config.routes.map((route) => ({ route, run: async () => {}, ...(route.kind === 'websocket' ? { upgrade } : {}) }));
  const table = createRouteTable(entries);
  const events = createEventBus();
  const ends: GatewayEvents['request:end'][] = [];
  events.on('request:end', (e) => ends.push(e));
  const handler = createUpgradeHandler({ current: () => table, events, logger: createLogger({ level: 'silent' }), isDraining: () => options.draining === true });
  return { handler, calls, ends };
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
  const refusals = [
    { name: 'a non-WebSocket upgrade', url: '/api/rooms/1', headers: { connection: 'Upgrade', upgrade: 'h2c' }, status: '400 Bad Request', code: 'GW_UPGRADE_UNSUPPORTED' },
    { name: 'an unknown path', url: '/api/nowhere', headers: WS, status: '404 Not Found', code: 'GW_ROUTE_NOT_FOUND' },
    { name: 'a path without a GET route', url: '/api/post-only', headers: WS, status: '405 Method Not Allowed', code: 'GW_METHOD_NOT_ALLOWED' },
    { name: 'a route that is not isWebSocket', url: '/api/plain', headers: WS, status: '400 Bad Request', code: 'GW_UPGRADE_UNSUPPORTED' },
  ];
  for (const c of refusals) {
    it(`answers ${c.name} with JSON on the socket and calls no endpoint`, async () => {
      const { handler, calls, ends } = setup();
      const socket = new RecordingSocket();
      handler(fakeRequest(c.url, { ...c.headers, 'x-request-id': 'r-1' }), socket, Buffer.alloc(0));
      await once(socket, 'close');
      const text = socket.text();
      assert.ok(text.startsWith(`HTTP/1.1 ${c.status}\r\n`), text);
      assert.match(text, new RegExp(`\\r\\nx-portico-error: ${c.code}\\r\\n`));
      assert.match(text, /\r\nx-request-id: r-1\r\n/);
      assert.match(text, /\r\n\r\n\{"error":".+","success":false\}$/);
      assert.equal(calls.length, 0);
      assert.equal(ends.length, 1);
      assert.equal(ends[0]!.errorCode, c.code);
      assert.equal(ends[0]!.requestId, 'r-1');
    });
  }

  it('sends Allow with a 405', async () => {
    const { handler } = setup();
    const socket = new RecordingSocket();
    handler(fakeRequest('/api/post-only', WS), socket, Buffer.alloc(0));
    await once(socket, 'close');
    assert.match(socket.text(), /\r\nallow: POST\r\n/);
  });

  it('answers 503 while draining', async () => {
    const { handler, calls } = setup({ draining: true });
    const socket = new RecordingSocket();
    handler(fakeRequest('/api/rooms/1', WS), socket, Buffer.alloc(0));
    await once(socket, 'close');
    assert.ok(socket.text().startsWith('HTTP/1.1 503 Service Unavailable\r\n'));
    assert.equal(calls.length, 0);
  });

  it('hands a WebSocket route its exchange: route, decoded params, raw query, request id, head bytes', async () => {
    const { handler, calls, ends } = setup();
    const socket = new RecordingSocket();
    const head = Buffer.from('early');
    handler(fakeRequest('/api/rooms/a%20b?x=1&y=2', { ...WS, 'x-request-id': 'r-2' }), socket, head);
    await new Promise((r) => setImmediate(r));
    assert.equal(calls.length, 1);
    const ux = calls[0]!;
    assert.equal(ux.route.id, 'GET /rooms/{room}');
    assert.deepEqual({ ...ux.params }, { room: 'a b' });
    assert.equal(ux.rawQuery, 'x=1&y=2');
    assert.equal(ux.requestId, 'r-2');
    assert.equal(ux.head, head);
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
