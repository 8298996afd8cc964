import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { Agent, request } from 'undici';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import type { Reply } from '../support/http.js';
import { createManualClock, type ManualClock } from '../support/manual-clock.js';

type Mode = 'fail' | 'ok' | 'hold';

/**
 * A real backend whose health the test switches: 'fail' answers 500, 'ok' 200, 'hold' keeps the
 * request until `releaseHeld()`. Every answer closes its connection, so `connections()` shows
 * whether the gateway even connected.
 */
async function switchableBackend(initial: Mode = 'fail') {
  let mode: Mode = initial;
  const held: ServerResponse[] = [];
  let heldWaiter: { count: number; resolve: () => void } | undefined;
  const backend = await startBackend((_req, res) => {
    if (mode === 'fail') return json(res, 500, { error: 'down' }, { connection: 'close' });
    if (mode === 'ok') return json(res, 200, { ok: true }, { connection: 'close' });
    held.push(res);
    if (heldWaiter !== undefined && held.length >= heldWaiter.count) heldWaiter.resolve();
  });
  let connections = 0;
  backend.server.on('connection', () => connections++);
  return {
    backend,
    set(next: Mode) {
      mode = next;
    },
    connections: () => connections,
    held,
    /** Resolves once `count` requests are being held. */
    heldCount(count: number): Promise<void> {
      if (held.length >= count) return Promise.resolve();
      return new Promise((resolve) => (heldWaiter = { count, resolve }));
    },
    releaseHeld() {
      for (const res of held.splice(0)) json(res, 200, { ok: true }, { connection: 'close' });
    },
  };
}

function circuitYaml(
  routes: string,
  cb: { maxFailures?: number; timeoutSec?: number; halfOpenRequests?: number; enabled?: boolean } = {},
): string {
  return `
routes:
${routes}
config:
  circuitBreaker:
    enabled: ${cb.enabled ?? true}
    maxFailures: ${cb.maxFailures ?? 3}
    timeoutSec: ${cb.timeoutSec ?? 1}
    halfOpenRequests: ${cb.halfOpenRequests ?? 1}
`;
}

function route(path: string, backend: TestBackend | string, extra = ''): string {
  const service = typeof backend === 'string' ? backend : backend.host;
  return `  - method: GET
    route: ${path}
    service: ${service}
    path: ${path}
${extra}`;
}

const OPEN_BODY = { error: 'Service temporarily unavailable (circuit open)', success: false };

function assertOpenAnswer(res: Reply, maxRetryAfter: number): void {
  assert.equal(res.status, 503);
  assert.deepEqual(res.json(), OPEN_BODY);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.headers['x-portico-error'], 'GW_CIRCUIT_OPEN');
  assert.equal(res.headers['content-length'], String(res.body.length));
  assert.match(String(res.headers['x-request-id']), /.+/);
  const retryAfter = String(res.headers['retry-after']);
  assert.match(retryAfter, /^[1-9][0-9]*$/);
  assert.ok(Number(retryAfter) <= maxRetryAfter, `Retry-After ${retryAfter} <= ${maxRetryAfter}`);
}

function changesLogged(gw: TestGateway): string[] {
  return gw.logs
    .filter((l) => l.msg === 'circuit state change')
    .map((l) => `${String(l.origin)} ${String(l.from)}->${String(l.to)} ${String(l.consecutiveFailures)}`);
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** With a `clock`, open periods pass when the test advances it, not in real time. */
async function gateway(yaml: string, clock?: ManualClock): Promise<TestGateway> {
  const gw = await startGateway(yaml, process.env, clock === undefined ? {} : { now: clock.now });
  cleanups.push(() => gw.close());
  return gw;
}

async function backendFor(initial: Mode = 'fail') {
  const b = await switchableBackend(initial);
  cleanups.push(() => b.backend.close());
  return b;
}

describe('circuit breaker (the transition table) against a real failing backend', () => {
  it('opens after maxFailures consecutive 5xx; then 503 at once without calling or connecting to the backend', async () => {
    const a = await backendFor('fail');
    const gw = await gateway(circuitYaml(route('/a', a.backend), { maxFailures: 3, timeoutSec: 30 }));
    for (let i = 1; i <= 3; i++) {
      const res = await gw.get('/api/a');
      assert.equal(res.status, 500, 'the backend answer is relayed while closed');
      assert.deepEqual(res.json(), { error: 'down' });
      assert.equal(a.backend.seen.length, i);
      assert.equal(a.connections(), i);
    }
    for (let i = 0; i < 10; i++) {
      assertOpenAnswer(await gw.get('/api/a'), 30);
      assert.equal(a.backend.seen.length, 3);
      assert.equal(a.connections(), 3, 'not even connected to');
    }
    assert.deepEqual(gw.gateway.circuits.snapshot(), [
      { origin: a.backend.url, state: 'open', consecutiveFailures: 3 },
    ]);
    assert.deepEqual(changesLogged(gw), [`${a.backend.url} closed->open 3`]);
    const line = gw.logs.find((l) => l.msg === 'circuit state change');
    assert.equal(line?.level, 40, 'logged as a warning');
  });

  it('a success resets the consecutive count', async () => {
    const a = await backendFor('fail');
    const gw = await gateway(circuitYaml(route('/a', a.backend), { maxFailures: 3, timeoutSec: 30 }));
    const statuses: number[] = [];
    for (const mode of ['fail', 'fail', 'ok', 'fail', 'fail'] as const) {
      a.set(mode);
      statuses.push((await gw.get('/api/a')).status);
    }
    assert.deepEqual(statuses, [500, 500, 200, 500, 500]);
    assert.equal(a.backend.seen.length, 5);
    assert.deepEqual(gw.gateway.circuits.snapshot(), [
      { origin: a.backend.url, state: 'closed', consecutiveFailures: 2 },
    ]);
    assert.equal((await gw.get('/api/a')).status, 500);
    assert.equal(a.backend.seen.length, 6);
    assertOpenAnswer(await gw.get('/api/a'), 30);
    assert.equal(a.backend.seen.length, 6);
  });

  it('a 4xx is a success, not a failure', async () => {
    const b = await startBackend((_req, res) => json(res, 404, { error: 'no such thing' }));
    cleanups.push(() => b.close());
    const gw = await gateway(circuitYaml(route('/a', b), { maxFailures: 1 }));
    for (let i = 0; i < 5; i++) assert.equal((await gw.get('/api/a')).status, 404);
    assert.equal(b.seen.length, 5);
    assert.equal(gw.gateway.circuits.snapshot()[0]?.state, 'closed');
  });

  it('after timeoutSec one probe goes through; its success closes the circuit', async () => {
    const a = await backendFor('fail');
    const clock = createManualClock();
    const gw = await gateway(circuitYaml(route('/a', a.backend), { maxFailures: 2, timeoutSec: 1 }), clock);
    await gw.get('/api/a');
    await gw.get('/api/a');
    assertOpenAnswer(await gw.get('/api/a'), 1);
    assert.equal(a.backend.seen.length, 2);
    clock.advance(999);
    assertOpenAnswer(await gw.get('/api/a'), 1);
    assert.equal(a.backend.seen.length, 2, 'still open just before timeoutSec');
    clock.advance(1);
    a.set('ok');
    assert.equal((await gw.get('/api/a')).status, 200);
    assert.equal(a.backend.seen.length, 3);
    assert.equal(gw.gateway.circuits.snapshot()[0]?.state, 'closed');
    for (let i = 0; i < 5; i++) assert.equal((await gw.get('/api/a')).status, 200);
    assert.equal(a.backend.seen.length, 8);
    assert.deepEqual(changesLogged(gw), [
      `${a.backend.url} closed->open 2`,
      `${a.backend.url} open->half-open 2`,
      `${a.backend.url} half-open->closed 0`,
    ]);
  });

  it('a failed probe reopens the circuit and restarts the timer', async () => {
    const a = await backendFor('fail');
    const clock = createManualClock();
    const gw = await gateway(circuitYaml(route('/a', a.backend), { maxFailures: 2, timeoutSec: 1 }), clock);
    await gw.get('/api/a');
    await gw.get('/api/a');
    clock.advance(1_000);
    const probe = await gw.get('/api/a');
    assert.equal(probe.status, 500, 'the failed probe answer is relayed');
    assert.equal(a.backend.seen.length, 3);
    // More than timeoutSec since the circuit first opened, yet open: the timer restarted.
    clock.advance(500);
    assertOpenAnswer(await gw.get('/api/a'), 1);
    assert.equal(a.backend.seen.length, 3);
    clock.advance(500);
    a.set('ok');
    assert.equal((await gw.get('/api/a')).status, 200);
    assert.equal(a.backend.seen.length, 4);
    assert.equal(gw.gateway.circuits.snapshot()[0]?.state, 'closed');
    assert.deepEqual(
      changesLogged(gw).map((c) => c.split(' ')[1]),
      ['closed->open', 'open->half-open', 'half-open->open', 'open->half-open', 'half-open->closed'],
    );
    assert.deepEqual(changesLogged(gw)[2], `${a.backend.url} half-open->open 3`);
  });

  it('a refused connection counts as a failure; the recovered backend is not connected to while open', async () => {
    const port = await closedPort();
    const clock = createManualClock();
    const gw = await gateway(circuitYaml(route('/a', `127.0.0.1:${port}`), { maxFailures: 2, timeoutSec: 1 }), clock);
    for (let i = 0; i < 2; i++) {
      const res = await gw.get('/api/a');
      assert.equal(res.status, 502);
      assert.equal(res.headers['x-portico-error'], 'GW_UPSTREAM_UNREACHABLE');
    }
    assertOpenAnswer(await gw.get('/api/a'), 1);
    assert.deepEqual(gw.gateway.circuits.snapshot(), [
      { origin: `http://127.0.0.1:${port}`, state: 'open', consecutiveFailures: 2 },
    ]);

    // The backend comes back on the same port: no connection while open, one probe after.
    let connections = 0;
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      json(res, 200, { ok: true });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    assertOpenAnswer(await gw.get('/api/a'), 1);
    assert.equal(connections, 0);
    clock.advance(1_000);
    assert.equal((await gw.get('/api/a')).status, 200);
    assert.equal(requests, 1);
    assert.equal(connections, 1);
    assert.equal(gw.gateway.circuits.snapshot()[0]?.state, 'closed');
  });

  it('isolation: one backend open, the other unaffected; routes to one origin share its circuit', async () => {
    const a = await backendFor('fail');
    const b = await backendFor('ok');
    const gw = await gateway(
      circuitYaml([route('/a', a.backend), route('/a2', a.backend), route('/b', b.backend)].join(''), {
        maxFailures: 2,
        timeoutSec: 30,
      }),
    );
    await gw.get('/api/a');
    await gw.get('/api/a2');
    assert.equal(a.backend.seen.length, 2);
    assertOpenAnswer(await gw.get('/api/a'), 30);
    assertOpenAnswer(await gw.get('/api/a2'), 30);
    assert.equal(a.backend.seen.length, 2);
    for (let i = 0; i < 5; i++) assert.equal((await gw.get('/api/b')).status, 200);
    assert.equal(b.backend.seen.length, 5);
    // And the other way round: b failing (below its threshold) leaves a's state as it was.
    b.set('fail');
    assert.equal((await gw.get('/api/b')).status, 500);
    assert.equal(b.backend.seen.length, 6);
    assert.deepEqual(
      gw.gateway.circuits.snapshot(),
      [
        { origin: a.backend.url, state: 'open', consecutiveFailures: 2 },
        { origin: b.backend.url, state: 'closed', consecutiveFailures: 1 },
      ].sort((x, y) => (x.origin < y.origin ? -1 : 1)),
    );
  });

  for (const halfOpenRequests of [1, 3]) {
    it(`200 concurrent requests when the circuit turns half-open admit exactly ${halfOpenRequests} probe(s)`, async () => {
      const a = await backendFor('fail');
      const clock = createManualClock();
      const gw = await gateway(
        circuitYaml(route('/a', a.backend), { maxFailures: 1, timeoutSec: 0.3, halfOpenRequests }),
        clock,
      );
      const agent = new Agent({ connections: 250 });
      cleanups.push(() => agent.close());
      assert.equal((await gw.get('/api/a')).status, 500);
      assert.equal(gw.gateway.circuits.snapshot()[0]?.state, 'open');
      a.set('hold');
      clock.advance(300);

      let rejected = 0;
      let allRejected!: () => void;
      const rejectedDone = new Promise<void>((resolve) => (allRejected = resolve));
      const results = Array.from({ length: 200 }, async () => {
        const res = await gw.get('/api/a', { dispatcher: agent });
        if (res.status === 503 && ++rejected === 200 - halfOpenRequests) allRejected();
        return res;
      });
      // Every request not held at the backend has been answered: all 200 have passed the circuit.
      await Promise.all([a.heldCount(halfOpenRequests), rejectedDone]);
      assert.equal(a.held.length, halfOpenRequests);
      assert.equal(a.backend.seen.length, 1 + halfOpenRequests);
      assert.equal(gw.gateway.circuits.snapshot()[0]?.state, 'half-open');

      a.releaseHeld();
      const answered = await Promise.all(results);
      const counts = new Map<number, number>();
      for (const r of answered) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
      assert.deepEqual([...counts].sort(), [
        [200, halfOpenRequests],
        [503, 200 - halfOpenRequests],
      ]);
      for (const r of answered.filter((x) => x.status === 503)) assertOpenAnswer(r, 1);
      assert.equal(a.backend.seen.length, 1 + halfOpenRequests);
      // halfOpenRequests successful probes closed it.
      assert.equal(gw.gateway.circuits.snapshot()[0]?.state, 'closed');
      a.set('ok');
      assert.equal((await gw.get('/api/a')).status, 200);
      assert.equal(a.backend.seen.length, 2 + halfOpenRequests);
    });
  }

  it('an SSE probe settles when the stream opens, not when it ends', async () => {
    let mode: Mode = 'fail';
    const streams: ServerResponse[] = [];
    const s = await startBackend((req, res) => {
      if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: one\n\n');
        streams.push(res);
        return;
      }
      json(res, mode === 'fail' ? 500 : 200, { mode });
    });
    cleanups.push(() => s.close());
    const clock = createManualClock();
    const gw = await gateway(
      circuitYaml([route('/plain', s), route('/events', s, '    isSSE: true\n')].join(''), {
        maxFailures: 1,
        timeoutSec: 0.3,
      }),
      clock,
    );
    assert.equal((await gw.get('/api/plain')).status, 500);
    clock.advance(300);
    const stream = await request(`${gw.url}/api/events`);
    assert.equal(stream.statusCode, 200);
    for await (const chunk of stream.body) {
      assert.equal(String(chunk), 'data: one\n\n');
      break;
    }
    assert.equal(streams.length, 1);
    // The stream is still open, yet the circuit closed: the probe slot is free again.
    assert.equal(gw.gateway.circuits.snapshot()[0]?.state, 'closed');
    mode = 'ok';
    assert.equal((await gw.get('/api/plain')).status, 200);
    assert.equal(s.seen.length, 3);
  });

  it('off unless enabled: failures never open anything', async () => {
    const a = await backendFor('fail');
    const gw = await gateway(circuitYaml(route('/a', a.backend), { enabled: false, maxFailures: 1 }));
    for (let i = 0; i < 5; i++) assert.equal((await gw.get('/api/a')).status, 500);
    assert.equal(a.backend.seen.length, 5);
    assert.deepEqual(gw.gateway.circuits.snapshot(), [
      { origin: a.backend.url, state: 'closed', consecutiveFailures: 0 },
    ]);
  });
});

describe('circuit breaker across configuration reloads', () => {
  it('state survives a reload for an origin that still exists, and new settings apply to it', async () => {
    const a = await backendFor('fail');
    const b = await backendFor('ok');
    const clock = createManualClock();
    const gw = await gateway(circuitYaml(route('/a', a.backend), { maxFailures: 2, timeoutSec: 30 }), clock);
    await gw.get('/api/a');
    await gw.get('/api/a');
    assertOpenAnswer(await gw.get('/api/a'), 30);

    // A new route on the same origin, another backend, other settings: the circuit stays open.
    gw.reload(
      circuitYaml([route('/a', a.backend), route('/a-new', a.backend), route('/b', b.backend)].join(''), {
        maxFailures: 5,
        timeoutSec: 60,
      }),
    );
    assertOpenAnswer(await gw.get('/api/a'), 60);
    assertOpenAnswer(await gw.get('/api/a-new'), 60);
    assert.equal(a.backend.seen.length, 2);
    assert.equal((await gw.get('/api/b')).status, 200);
    assert.deepEqual(
      gw.gateway.circuits.snapshot(),
      [
        { origin: a.backend.url, state: 'open', consecutiveFailures: 2 },
        { origin: b.backend.url, state: 'closed', consecutiveFailures: 0 },
      ].sort((x, y) => (x.origin < y.origin ? -1 : 1)),
    );

    // A shorter timeout reaches the circuit that opened under the longer one.
    gw.reload(circuitYaml(route('/a', a.backend), { maxFailures: 2, timeoutSec: 0.2 }));
    clock.advance(200);
    a.set('ok');
    assert.equal((await gw.get('/api/a')).status, 200);
    assert.equal(a.backend.seen.length, 3);
    assert.deepEqual(
      gw.gateway.circuits.snapshot(),
      [{ origin: a.backend.url, state: 'closed', consecutiveFailures: 0 }],
      'b is no longer configured, so no longer listed',
    );
  });

  it('disabling by reload lets requests through; enabling again starts closed', async () => {
    const a = await backendFor('fail');
    const gw = await gateway(circuitYaml(route('/a', a.backend), { maxFailures: 1, timeoutSec: 30 }));
    await gw.get('/api/a');
    assertOpenAnswer(await gw.get('/api/a'), 30);
    assert.equal(a.backend.seen.length, 1);

    gw.reload(circuitYaml(route('/a', a.backend), { enabled: false, maxFailures: 1 }));
    for (let i = 0; i < 3; i++) assert.equal((await gw.get('/api/a')).status, 500);
    assert.equal(a.backend.seen.length, 4);

    gw.reload(circuitYaml(route('/a', a.backend), { maxFailures: 2, timeoutSec: 30 }));
    assert.equal((await gw.get('/api/a')).status, 500);
    assert.equal((await gw.get('/api/a')).status, 500);
    assertOpenAnswer(await gw.get('/api/a'), 30);
    assert.equal(a.backend.seen.length, 6);
  });

  it('an origin removed by a reload and added back starts closed', async () => {
    const a = await backendFor('fail');
    const b = await backendFor('ok');
    const gw = await gateway(circuitYaml(route('/a', a.backend), { maxFailures: 1, timeoutSec: 30 }));
    await gw.get('/api/a');
    assertOpenAnswer(await gw.get('/api/a'), 30);
    gw.reload(circuitYaml(route('/b', b.backend), { maxFailures: 1, timeoutSec: 30 }));
    assert.deepEqual(gw.gateway.circuits.snapshot(), [
      { origin: b.backend.url, state: 'closed', consecutiveFailures: 0 },
    ]);
    a.set('ok');
    gw.reload(circuitYaml(route('/a', a.backend), { maxFailures: 1, timeoutSec: 30 }));
    assert.equal((await gw.get('/api/a')).status, 200);
    assert.equal(a.backend.seen.length, 2);
  });
});
