import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { loadConfigText } from '../config/load.js';
import { compileRoutes } from '../pipeline/compile-route.js';
import type { CompiledRoute } from '../pipeline/types.js';
import type { Upstream } from '../upstream/types.js';
import { requestDropSet } from '../upstream/trust-boundary.js';
import { createEventBus } from '../observability/events.js';
import { createLogger } from '../observability/logger.js';
import { acceptFor, handshakeProblem, upgradeResponseHeaders, websocketEndpoint } from './websocket.js';
import { backendUpgradeHeaders } from '../upstream/call/upgrade-call.js';
import { fakeUpgradeExchange } from '../../test/support/exchanges.js';

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
  return compileRoutes(r.config).routes[0]!;
}

describe('upgradeResponseHeaders', () => {
  const handshake = ['Upgrade', 'websocket', 'Connection', 'Upgrade', 'Sec-WebSocket-Accept', 'abc='];
  it("keeps the backend's 101 headers in order and spelling, replaces its request id with the gateway's", () => {
    assert.deepEqual(
      upgradeResponseHeaders(
        [...handshake, 'X-Request-ID', 'backend', 'Sec-WebSocket-Protocol', 'chat', 'Keep-Alive', 'timeout=5'],
        'gw-id',
      ),
      [...handshake, 'Sec-WebSocket-Protocol', 'chat', 'x-request-id', 'gw-id'],
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
    const call = {
      route: { editHeaders: { request: undefined, response: undefined } } as unknown as CompiledRoute,
      upstream: { origin: { hostHeader: 'backend:9000' } } as Upstream,
      dropHeaders: requestDropSet(['X-userId'], false),
      identityEncoding: false,
    };
    const headers = backendUpgradeHeaders(call, {
      req,
      requestId: 'rid-9',
      claimHeaders: [['X-role', 'admin']],
      claims: undefined,
      params: {},
    });
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
  it('a client that left before the endpoint runs: no backend call, recorded as aborted', async () => {
    const route = protectedRoute();
    const step = websocketEndpoint(route, {
      upstream: { origin: route.origin, tlsConnect: undefined } as unknown as Upstream,
      dropHeaders: requestDropSet([], false),
      headersTimeoutMs: 1000,
      events: createEventBus(),
      logger: createLogger({ level: 'silent' }),
    });
    const { ex, socket } = fakeUpgradeExchange(route);
    socket.destroy();
    await step(ex);
    assert.equal(ex.upstreamFailure, 'aborted');
    assert.equal(ex.res.headersSent, false);
    assert.equal(socket.written.length, 0);
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
