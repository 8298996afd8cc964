import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { loadConfigText, type CompiledRoute } from '../config/compile.js';
import type { Upstream } from '../upstream/upstream.js';
import type { CircuitBreaker } from '../circuit/breaker.js';
import type { Authenticator, AuthOutcome } from '../auth/authenticator.js';
import { requestDropSet } from '../upstream/forward-headers.js';
import { createEventBus, type GatewayEvents } from '../observability/events.js';
import { createLogger } from '../observability/logger.js';
import {
  acceptFor,
  backendUpgradeHeaders,
  handshakeProblem,
  upgradeResponseHeaders,
  websocketEndpoint,
  type UpgradeExchange,
} from './websocket.js';
import { RecordingSocket } from '../../test/support/recording-socket.js';

function fakeRequest(rawHeaders: string[]): IncomingMessage {
  const headers: Record<string, string> = {};
  for (let i = 0; i < rawHeaders.length; i += 2) headers[rawHeaders[i]!.toLowerCase()] = rawHeaders[i + 1]!;
  return {
    method: 'GET',
    url: '/api/chat',
    rawHeaders,
    headers,
    socket: { remoteAddress: '10.0.0.7' },
  } as unknown as IncomingMessage;
}

function protectedRoute(): CompiledRoute {
  const r = loadConfigText(
    `
routes:
  - { method: GET, route: /chat, service: "127.0.0.1:1", path: /chat, isWebSocket: true }
config:
  auth: { secret: "a-unit-test-secret-of-at-least-32-bytes", defaultProtected: true }
`,
    'unit.yaml',
    {},
  );
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.config.routes[0]!;
}

function exchange(route: CompiledRoute, socket: Duplex): UpgradeExchange {
  return {
    route,
    req: fakeRequest(['Host', 'gw', 'Connection', 'Upgrade', 'Upgrade', 'websocket']),
    socket,
    head: Buffer.alloc(0),
    requestId: 'rid-1',
    params: {},
    rawQuery: '',
    claimHeaders: undefined,
    status: undefined,
    upstreamStatus: undefined,
    upstreamFailure: undefined,
    errorCode: undefined,
  };
}

function breaker(open: boolean, acquired: { count: number }): CircuitBreaker {
  return {
    origin: 'http://127.0.0.1:1',
    state: open ? 'open' : 'closed',
    acquire() {
      acquired.count++;
      return open ? undefined : { succeed() {}, fail() {}, release() {} };
    },
    retryAfterSec: () => 12.2,
  };
}

function upstreamWith(b: CircuitBreaker, route: CompiledRoute): Upstream {
  return { origin: route.origin, breaker: b, tlsConnect: undefined } as unknown as Upstream;
}

describe('upgradeResponseHeaders', () => {
  it("keeps the backend's 101 headers in order and spelling, replaces its request id with the gateway's", () => {
    assert.deepEqual(
      upgradeResponseHeaders(
        [
          'Upgrade',
          'websocket',
          'Connection',
          'Upgrade',
          'Sec-WebSocket-Accept',
          'abc=',
          'X-Request-ID',
          'backend',
          'Sec-WebSocket-Protocol',
          'chat',
          'Keep-Alive',
          'timeout=5',
        ],
        'gw-id',
      ),
      [
        'Upgrade',
        'websocket',
        'Connection',
        'Upgrade',
        'Sec-WebSocket-Accept',
        'abc=',
        'Sec-WebSocket-Protocol',
        'chat',
        'x-request-id',
        'gw-id',
      ],
    );
  });
});

describe('backendUpgradeHeaders', () => {
  it('forwards the handshake and end-to-end headers, replaces Host, sets Connection/Upgrade once, adds X-Forwarded-* and claims', () => {
    const req = fakeRequest([
      'Host',
      'gateway.example',
      'Connection',
      'keep-alive, Upgrade',
      'Upgrade',
      'websocket',
      'Sec-WebSocket-Key',
      'dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Version',
      '13',
      'Sec-WebSocket-Protocol',
      'chat, superchat',
      'Sec-WebSocket-Extensions',
      'permessage-deflate',
      'Cookie',
      'sid=1',
      'X-Role',
      'forged',
      'X-userId',
      'stripped',
    ]);
    const headers = backendUpgradeHeaders(
      { req, requestId: 'rid-9', claimHeaders: [['X-role', 'admin']] },
      'backend:9000',
      requestDropSet(['X-userId'], false),
    );
    const pairs: [string, string][] = [];
    for (let i = 0; i < headers.length; i += 2) pairs.push([headers[i]!, headers[i + 1]!]);
    assert.deepEqual(pairs, [
      ['host', 'backend:9000'],
      ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='],
      ['Sec-WebSocket-Version', '13'],
      ['Sec-WebSocket-Protocol', 'chat, superchat'],
      ['Sec-WebSocket-Extensions', 'permessage-deflate'],
      ['Cookie', 'sid=1'],
      ['X-role', 'admin'],
      ['x-forwarded-for', '10.0.0.7'],
      ['x-forwarded-proto', 'http'],
      ['x-request-id', 'rid-9'],
      ['x-forwarded-host', 'gateway.example'],
      ['connection', 'Upgrade'],
      ['upgrade', 'websocket'],
    ]);
  });
});

describe('websocketEndpoint before the backend is contacted', () => {
  it("writes the Authenticator's refusal onto the socket and never asks the circuit", async () => {
    const route = protectedRoute();
    const acquired = { count: 0 };
    const refusal: AuthOutcome = {
      ok: false,
      status: 401,
      headers: { 'content-type': 'application/json', 'content-length': '2', 'www-authenticate': 'Bearer' },
      body: Buffer.from('{}'),
      code: 'GW_AUTH_MISSING',
    };
    const authenticator: Authenticator = { authenticate: async () => refusal };
    const events = createEventBus();
    const results: GatewayEvents['auth:result'][] = [];
    events.on('auth:result', (e) => results.push(e));
    const step = websocketEndpoint(route, {
      upstream: upstreamWith(breaker(false, acquired), route),
      dropHeaders: new Set(),
      authenticator,
      handshakeTimeoutMs: 1000,
      events,
      logger: createLogger({ level: 'silent' }),
    });
    const socket = new RecordingSocket();
    const ux = exchange(route, socket);
    await step(ux);
    await once(socket, 'close');
    const text = socket.text();
    assert.ok(text.startsWith('HTTP/1.1 401 Unauthorized\r\n'));
    assert.match(text, /\r\nwww-authenticate: Bearer\r\n/);
    assert.match(text, /\r\nx-request-id: rid-1\r\n/);
    assert.ok(text.endsWith('\r\n\r\n{}'));
    assert.equal(ux.status, 401);
    assert.equal(ux.errorCode, 'GW_AUTH_MISSING');
    assert.equal(acquired.count, 0);
    assert.deepEqual(
      results.map((r) => r.outcome),
      ['missing'],
    );
  });

  it('answers 503 JSON with Retry-After when the circuit refuses a permit', async () => {
    const route = protectedRoute();
    const acquired = { count: 0 };
    const authenticator: Authenticator = { authenticate: async () => ({ ok: true, claimHeaders: [['X-sub', 'u1']] }) };
    const step = websocketEndpoint(route, {
      upstream: upstreamWith(breaker(true, acquired), route),
      dropHeaders: new Set(),
      authenticator,
      handshakeTimeoutMs: 1000,
      events: createEventBus(),
      logger: createLogger({ level: 'silent' }),
    });
    const socket = new RecordingSocket();
    const ux = exchange(route, socket);
    await step(ux);
    await once(socket, 'close');
    const text = socket.text();
    assert.ok(text.startsWith('HTTP/1.1 503 Service Unavailable\r\n'));
    assert.match(text, /\r\nretry-after: 13\r\n/);
    assert.match(text, /\r\nx-portico-error: GW_CIRCUIT_OPEN\r\n/);
    assert.equal(acquired.count, 1);
    assert.equal(ux.errorCode, 'GW_CIRCUIT_OPEN');
    assert.deepEqual(ux.claimHeaders, [['X-sub', 'u1']]);
  });
});

describe('handshakeProblem: a 101 is tunneled only when it answers the client key', () => {
  // RFC 6455 1.3's example key and accept value.
  const key = 'dGhlIHNhbXBsZSBub25jZQ==';
  const accept = 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=';

  it('computes the accept value of RFC 6455', () => {
    assert.equal(acceptFor(key), accept);
  });

  it('accepts a valid answer (Upgrade token case-insensitive)', () => {
    assert.equal(handshakeProblem({ upgrade: 'WebSocket', 'sec-websocket-accept': accept }, key), undefined);
  });

  it('refuses a wrong or missing accept, a missing Upgrade: websocket, or no single client key', () => {
    assert.match(
      handshakeProblem({ upgrade: 'websocket', 'sec-websocket-accept': acceptFor('other') }, key)!,
      /does not match/,
    );
    assert.match(handshakeProblem({ upgrade: 'websocket' }, key)!, /without Sec-WebSocket-Accept/);
    assert.match(
      handshakeProblem({ upgrade: 'h2c', 'sec-websocket-accept': accept }, key)!,
      /without Upgrade: websocket/,
    );
    assert.match(handshakeProblem({ 'sec-websocket-accept': accept }, key)!, /without Upgrade: websocket/);
    assert.match(
      handshakeProblem({ upgrade: 'websocket', 'sec-websocket-accept': accept }, undefined)!,
      /no single Sec-WebSocket-Key/,
    );
    assert.match(
      handshakeProblem({ upgrade: 'websocket', 'sec-websocket-accept': accept }, [key, key])!,
      /no single Sec-WebSocket-Key/,
    );
  });
});
