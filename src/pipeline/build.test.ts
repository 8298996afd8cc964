/**
 * The HTTP recipes of pipeline/build.ts, run with fake `next`s (one that records, one that must
 * never run, one that waits), a fake Authenticator and a recording breaker: which layers a route
 * gets, and in which order they answer. No network: the endpoints are never reached.
 * WebSocket handshakes go through the same recipes, answering onto their socket (a RecordingSocket).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildPipeline, routeLayers } from './build.js';
import type { Exchange } from './types.js';
import {
  fakeExchange,
  fakeRequest,
  fakeUpgradeExchange,
  neverRuns,
  recordingNext,
  waitingNext,
} from '../../test/support/exchanges.js';
import { once } from 'node:events';
import {
  BREAKER,
  BROWSER,
  closePipelineSetups,
  httpPipeline,
  oneRoute,
  PROTECTED,
  REFUSAL,
  SECRET,
  setup,
} from '../../test/support/pipeline-setup.js';

after(closePipelineSetups);

describe('buildPipeline, HTTP: auth before the circuit', () => {
  it('a public route: no token check; the circuit admits, and counts the outcome once next is done', async () => {
    const { deps, route, breakerLog, authCalls } = setup(
      oneRoute('{ method: GET, route: /orders, service: "127.0.0.1:1", path: /orders }', BREAKER),
    );
    const { ex } = fakeExchange(route());
    const waiting = waitingNext<Exchange>((e) => (e.upstreamStatus = 200));
    const running = httpPipeline(route(), deps, waiting.next)(ex);
    assert.equal(await waiting.started, ex);
    assert.deepEqual(breakerLog, ['acquire'], 'not settled while the endpoint is busy');
    waiting.finish();
    await running;
    assert.deepEqual(breakerLog, ['acquire', 'succeed']);
    assert.deepEqual(authCalls, []);
  });

  it('a protected route: the token is checked before the circuit, and its claims reach next', async () => {
    const { deps, route, breakerLog, authCalls } = setup(
      oneRoute('{ method: GET, route: /orders, service: "127.0.0.1:1", path: /orders }', BREAKER, PROTECTED),
    );
    const { next, seen } = recordingNext<Exchange>();
    const { ex } = fakeExchange(route());
    await httpPipeline(route(), deps, next)(ex);
    assert.deepEqual(authCalls, ['rid-1']);
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0]!.claimHeaders, [['X-sub', 'u1']]);
    assert.deepEqual(breakerLog, ['acquire', 'release'], 'no backend outcome recorded: nothing counted');
  });

  it('a refused token stops the chain before the circuit: no probe slot is taken', async () => {
    const { deps, route, breakerLog } = setup(
      `
routes:
  - { method: GET, route: /orders, service: "127.0.0.1:1", path: /orders }
config:
  circuitBreaker: { enabled: true }
  auth: { secret: "${SECRET}", defaultProtected: true }
`,
      { auth: REFUSAL },
    );
    const { ex, written } = fakeExchange(route());
    await httpPipeline(route(), deps, neverRuns())(ex);
    assert.equal(written.status, 401);
    assert.equal(ex.errorCode, 'GW_AUTH_MISSING');
    assert.deepEqual(breakerLog, []);
  });
});

describe('buildPipeline, HTTP: cheap refusals first, and no layer a route does not need', () => {
  it('the rate limit refuses before auth, and CORS headers are on the refusal', async () => {
    const { deps, route, authCalls } = setup(
      oneRoute(
        '{ method: GET, route: /orders, service: "127.0.0.1:1", path: /orders, rateLimit: { requestsPerSec: 1, burst: 1 } }',
        BREAKER,
        PROTECTED,
        `cors: { origins: ["${BROWSER}"] }`,
      ),
    );
    const req = fakeRequest({ origin: BROWSER });
    const first = recordingNext<Exchange>();
    const { ex: allowed, written: allowedHead } = fakeExchange(route(), req);
    await httpPipeline(route(), deps, first.next)(allowed);
    assert.equal(first.seen.length, 1);
    assert.equal(allowedHead.headers['access-control-allow-origin'], BROWSER);
    assert.equal(allowedHead.headers['ratelimit-limit'], '1');

    const { ex, written } = fakeExchange(route(), req);
    await httpPipeline(route(), deps, neverRuns())(ex);
    assert.equal(written.status, 429);
    assert.equal(written.headers['access-control-allow-origin'], BROWSER);
    assert.equal(ex.errorCode, 'GW_RATE_LIMITED');
    assert.deepEqual(authCalls, ['rid-1'], 'only the admitted request was authenticated');
  });

  it('the body limit refuses an oversized upload before auth reads the token', async () => {
    const { deps, route, authCalls, breakerLog } = setup(
      oneRoute(
        '{ method: POST, route: /upload, service: "127.0.0.1:1", path: /upload, maxBodyBytes: 10 }',
        BREAKER,
        PROTECTED,
      ),
    );
    const { ex, written } = fakeExchange(route(), fakeRequest({ 'content-length': '11' }, 'POST'));
    await httpPipeline(route(), deps, neverRuns())(ex);
    assert.equal(written.status, 413);
    assert.equal(ex.errorCode, 'GW_BODY_TOO_LARGE');
    assert.deepEqual(authCalls, []);
    assert.deepEqual(breakerLog, []);
  });

  it('a disabled breaker puts no circuit layer in the recipe', async () => {
    const { deps, route, breakerLog } = setup(
      oneRoute(
        '{ method: GET, route: /orders, service: "127.0.0.1:1", path: /orders }',
        'circuitBreaker: { enabled: false }',
      ),
    );
    const { next, seen } = recordingNext<Exchange>();
    await httpPipeline(route(), deps, next)(fakeExchange(route()).ex);
    assert.equal(seen.length, 1);
    assert.deepEqual(breakerLog, []);
  });
});

describe('buildPipeline, HTTP: route kinds, and refusals when the route is built', () => {
  it('an SSE route settles its permit when the endpoint starts the response, not when the stream ends', async () => {
    const { deps, route, breakerLog } = setup(
      oneRoute('{ method: GET, route: /events, service: "127.0.0.1:1", path: /events, isSSE: true }', BREAKER),
    );
    const waiting = waitingNext<Exchange>((e) => {
      e.upstreamStatus = 200;
      e.onResponseStart?.();
    });
    const running = httpPipeline(route(), deps, waiting.next)(fakeExchange(route()).ex);
    await waiting.started;
    assert.deepEqual(breakerLog, ['acquire', 'succeed'], 'settled while the stream is open');
    waiting.finish();
    await running;
    assert.deepEqual(breakerLog, ['acquire', 'succeed']);
  });

  it('a plain request on a WebSocket route: 426 from the endpoint, no circuit, no backend', async () => {
    const { deps, route, breakerLog } = setup(
      oneRoute('{ method: GET, route: /chat, service: "127.0.0.1:1", path: /chat, isWebSocket: true }', BREAKER),
    );
    const { ex, written } = fakeExchange(route());
    await buildPipeline(route(), deps)(ex);
    assert.equal(written.status, 426);
    assert.equal(written.headers['upgrade'], 'websocket');
    assert.equal(ex.errorCode, 'GW_UPGRADE_REQUIRED');
    assert.deepEqual(breakerLog, []);
  });

  it('a route that requires auth without an authenticator is refused when it is built', () => {
    const { deps, route } = setup(
      oneRoute('{ method: GET, route: /orders, service: "127.0.0.1:1", path: /orders }', BREAKER, PROTECTED),
    );
    assert.throws(() => routeLayers(route(), { ...deps, authenticator: undefined }), /requires auth/);
  });
});

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
    const { deps, route, breakerLog, authCalls } = setup(
      oneRoute('{ method: GET, route: /chat, service: "127.0.0.1:1", path: /chat, isWebSocket: true }', BREAKER),
    );
    const { next, seen } = recordingNext<Exchange>();
    const { ex } = fakeUpgradeExchange(route(), fakeRequest({ host: 'gw', origin: 'https://anyone.example' }));
    await httpPipeline(route(), deps, next)(ex);
    assert.deepEqual(seen, [ex]);
    assert.deepEqual(authCalls, []);
    assert.deepEqual(breakerLog, ['acquire', 'release']);
  });
});
