/**
 * The recipes of pipeline/build.ts for a WebSocket handshake: the same layers as a plain request,
 * answering onto the socket (a RecordingSocket here). No network: the endpoints are never reached.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { buildPipeline } from './build.js';
import type { Exchange } from './types.js';
import {
  fakeRequest,
  fakeUpgradeExchange,
  neverRuns,
  recordingNext,
  waitingNext,
} from '../../test/support/exchanges.js';
import {
  BROWSER,
  closePipelineSetups,
  httpPipeline,
  REFUSAL,
  SECRET,
  setup,
} from '../../test/support/pipeline-setup.js';

after(closePipelineSetups);

const WS_ROUTE = `
routes:
  - { method: GET, route: /chat, service: "127.0.0.1:1", path: /chat, isWebSocket: true, rateLimit: { requestsPerSec: 1, burst: 1 } }
  - { method: GET, route: /plain, service: "127.0.0.1:1", path: /plain }
config:
  circuitBreaker: { enabled: true }
  auth: { secret: "${SECRET}", defaultProtected: true }
  cors: { origins: ["${BROWSER}"] }
`;

describe('the same recipe for a WebSocket handshake: refusals', () => {
  it("writes the Authenticator's refusal onto the socket and never asks the circuit", async () => {
    const { deps, route, breakerLog, authResults } = setup(WS_ROUTE, { auth: REFUSAL });
    const { ex, socket } = fakeUpgradeExchange(route());
    await buildPipeline(route(), deps)(ex);
    await once(socket, 'close');
    const text = socket.text();
    assert.ok(text.startsWith('HTTP/1.1 401 Unauthorized\r\n'), text);
    assert.match(text, /\r\nwww-authenticate: Bearer\r\n/);
    assert.match(text, /\r\nx-request-id: rid-1\r\n/);
    assert.ok(text.endsWith('\r\n\r\n{}'));
    assert.equal(ex.res.statusCode, 401);
    assert.equal(ex.errorCode, 'GW_AUTH_MISSING');
    assert.deepEqual(breakerLog, []);
    assert.deepEqual(
      authResults.map((r) => r.outcome),
      ['missing'],
    );
  });

  it('answers 503 JSON with Retry-After when the circuit refuses a permit, after auth', async () => {
    const { deps, route, breakerLog } = setup(WS_ROUTE, { admit: false });
    const { ex, socket } = fakeUpgradeExchange(route());
    await buildPipeline(route(), deps)(ex);
    await once(socket, 'close');
    const text = socket.text();
    assert.ok(text.startsWith('HTTP/1.1 503 Service Unavailable\r\n'), text);
    assert.match(text, /\r\nretry-after: 13\r\n/);
    assert.match(text, /\r\nx-portico-error: GW_CIRCUIT_OPEN\r\n/);
    assert.deepEqual(breakerLog, ['acquire']);
    assert.equal(ex.res.statusCode, 503);
    assert.equal(ex.errorCode, 'GW_CIRCUIT_OPEN');
    assert.deepEqual(ex.claimHeaders, [['X-sub', 'u1']]);
  });

  it('rate limit, then Origin check, then auth, then circuit, then next with the claims', async () => {
    const { deps, route, breakerLog, authCalls } = setup(WS_ROUTE);
    const foreign = fakeUpgradeExchange(route(), fakeRequest({ host: 'gw', origin: 'https://evil.example' }));
    await httpPipeline(route(), deps, neverRuns())(foreign.ex);
    assert.equal(foreign.ex.res.statusCode, 403);
    assert.equal(foreign.ex.errorCode, 'GW_ORIGIN_NOT_ALLOWED');
    assert.deepEqual(authCalls, [], 'a foreign origin is refused before the token is checked');

    // The refused handshake took the client's only token: the next one is over the limit.
    const limited = fakeUpgradeExchange(route(), fakeRequest({ host: 'gw', origin: BROWSER }));
    await httpPipeline(route(), deps, neverRuns())(limited.ex);
    assert.equal(limited.ex.res.statusCode, 429);
    assert.equal(limited.ex.errorCode, 'GW_RATE_LIMITED');
    assert.deepEqual(authCalls, []);
    assert.deepEqual(breakerLog, []);
  });
});

describe('the same recipe for a WebSocket handshake: admitted', () => {
  it('an admitted upgrade reaches next with its claims; the permit is settled when next is done', async () => {
    const { deps, route, breakerLog } = setup(WS_ROUTE);
    const waiting = waitingNext<Exchange>((u) => {
      u.upstreamStatus = 101;
    });
    const { ex } = fakeUpgradeExchange(route(), fakeRequest({ host: 'gw', origin: BROWSER }));
    const running = httpPipeline(route(), deps, waiting.next)(ex);
    assert.deepEqual((await waiting.started).claimHeaders, [['X-sub', 'u1']]);
    assert.deepEqual(breakerLog, ['acquire']);
    waiting.finish();
    await running;
    assert.deepEqual(breakerLog, ['acquire', 'succeed']);
  });

  it('a public WebSocket route without limits or CORS has only the circuit layer', async () => {
    const { deps, route, breakerLog, authCalls } = setup(`
routes:
  - { method: GET, route: /chat, service: "127.0.0.1:1", path: /chat, isWebSocket: true }
config:
  circuitBreaker: { enabled: true }
`);
    const { next, seen } = recordingNext<Exchange>();
    const { ex } = fakeUpgradeExchange(route(), fakeRequest({ host: 'gw', origin: 'https://anyone.example' }));
    await httpPipeline(route(), deps, next)(ex);
    assert.deepEqual(seen, [ex]);
    assert.deepEqual(authCalls, []);
    assert.deepEqual(breakerLog, ['acquire', 'release']);
  });
});
