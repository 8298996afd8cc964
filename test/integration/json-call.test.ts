/**
 * One JSON call (a mapping call, by default) against real local services, with a recording circuit breaker: the outcome of
 * every call is reported exactly once (succeed for an answer < 500, fail for 5xx or no answer,
 * release when the caller gave up), and an open circuit means no call at all (docs/design-decisions.md "Circuit breaker").
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Pool } from 'undici';
import type { CircuitBreaker, CircuitPermit } from '../../src/circuit/types.js';
import type { Origin } from '../../src/config/types.js';
import { parseService } from '../../src/config/syntax/service.js';
import type { Upstream } from '../../src/upstream/types.js';
import { callJson } from '../../src/upstream/call/json-call.js';
import { closedPort, json, startBackend, type TestBackend } from '../support/backend.js';

function recordingBreaker(open = false): CircuitBreaker & { reports: string[] } {
  const reports: string[] = [];
  const permit: CircuitPermit = {
    succeed: () => reports.push('succeed'),
    fail: () => reports.push('fail'),
    release: () => reports.push('release'),
  };
  return {
    origin: 'x',
    state: open ? 'open' : 'closed',
    acquire: () => (open ? undefined : permit),
    retryAfterSec: () => 0,
    reports,
  };
}

function upstreamFor(host: string, breaker: CircuitBreaker, connections = 4): Upstream {
  const origin = parseService(host) as Origin;
  const pool = { dispatcher: new Pool(`http://${host}`, { connections }), inFlight: 0, connections, origin };
  return { origin, pick: () => pool, breaker } as unknown as Upstream;
}

/** An upstream of two targets that a retry moves between, with a budget that always has a retry. */
function twoTargets(first: string, second: string, breaker: CircuitBreaker): Upstream {
  const [a, b] = [first, second].map((host) => upstreamFor(host, breaker).pick());
  const origin = parseService(second) as Origin;
  const retryBudget = { call: () => undefined, tryRetry: () => true };
  return { origin, pick: (avoid?: unknown) => (avoid === a ? b : a), breaker, retryBudget } as unknown as Upstream;
}

describe('callJson', () => {
  let backend: TestBackend;
  let firstOf503 = 0;
  const upstreams: Upstream[] = [];
  before(async () => {
    backend = await startBackend((req, res) => {
      if (req.url === '/ok') return json(res, 200, { a: 1 });
      if (req.url === '/404') return json(res, 404, { e: 1 });
      if (req.url === '/500') return json(res, 500, { e: 1 });
      if (req.url === '/sleep') return void setTimeout(() => json(res, 200, { slept: true }), 250);
      if (req.url === '/trickle') {
        // Headers at once, then a byte every 50 ms, never the end: no idle gap for bodyTimeout.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[');
        const tick = setInterval(() => res.write(' '), 50);
        res.once('close', () => clearInterval(tick));
        return;
      }
      if (req.url === '/503-then-silent') {
        // The first call gets a 503 late in its budget; the next one (on another target) no answer.
        if (firstOf503 !== 0) return;
        firstOf503 = performance.now();
        return void setTimeout(() => json(res, 503, { e: 1 }), 500);
      }
      // '/silent' never answers
    });
  });
  after(async () => {
    for (const u of upstreams) {
      await u.pick().dispatcher.destroy();
      await u.pick(u.pick()).dispatcher.destroy();
    }
    await backend?.close();
  });
  const make = (open = false, host = backend.host) => {
    const breaker = recordingBreaker(open);
    const u = upstreamFor(host, breaker);
    upstreams.push(u);
    return { u, breaker };
  };
  const opts = { requestId: 'rid-1', timeoutMs: 300, maxBytes: 1000 };

  const cases = [
    { path: '/ok', outcome: { ok: true, json: '{"a":1}' }, reports: ['succeed'] },
    { path: '/404', outcome: { ok: false, reason: 'status 404' }, reports: ['succeed'] },
    { path: '/500', outcome: { ok: false, reason: 'status 500' }, reports: ['fail'] },
    { path: '/silent', outcome: { ok: false, reason: 'timeout' }, reports: ['fail'] },
  ];
  for (const c of cases) {
    it(`${c.path}: ${JSON.stringify(c.outcome)}, circuit told ${c.reports.join()}`, async () => {
      const { u, breaker } = make();
      assert.deepEqual(await callJson(u, c.path, opts), c.outcome);
      assert.deepEqual(breaker.reports, c.reports);
      assert.equal(backend.seen.at(-1)?.headers['x-request-id'], 'rid-1');
    });
  }

  it('connection refused: fail', async () => {
    const { u, breaker } = make(false, `127.0.0.1:${await closedPort()}`);
    assert.deepEqual(await callJson(u, '/x', opts), { ok: false, reason: 'refused' });
    assert.deepEqual(breaker.reports, ['fail']);
  });

  it('the caller giving up: release, and the backend connection is closed', async () => {
    const { u, breaker } = make();
    const abort = new AbortController();
    const arrived = new Promise<IncomingMessage>((resolve) => backend.server.once('request', resolve));
    const pending = callJson(u, '/silent', { ...opts, timeoutMs: 10_000, signal: abort.signal });
    const req = await arrived;
    const closed = new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
    abort.abort();
    assert.deepEqual(await pending, { ok: false, reason: 'aborted' });
    assert.deepEqual(breaker.reports, ['release']);
    await closed;
  });

  it('mappingSec counts from dispatch: a call queued behind a busy connection longer than that still succeeds', async () => {
    const breaker = recordingBreaker();
    const u = upstreamFor(backend.host, breaker, 1);
    upstreams.push(u);
    const busy = callJson(u, '/sleep', { ...opts, timeoutMs: 5_000 });
    const queued = callJson(u, '/ok', { ...opts, timeoutMs: 150 });
    assert.deepEqual(
      await queued,
      { ok: true, json: '{"a":1}' },
      'waited ~250 ms for the only connection, then answered at once',
    );
    assert.deepEqual(await busy, { ok: true, json: '{"slept":true}' });
    assert.deepEqual(breaker.reports, ['succeed', 'succeed']);
  });

  it('counts itself on its pool while it runs, like every call on the pool', async () => {
    const { u } = make();
    const call = callJson(u, '/sleep', opts);
    assert.equal(u.pick().inFlight, 1);
    await call;
    assert.equal(u.pick().inFlight, 0);
  });

  it('a body still arriving mappingSec after the headers: timeout; the circuit counted the answer (headers < 500) as a success', async () => {
    const { u, breaker } = make();
    const started = performance.now();
    assert.deepEqual(await callJson(u, '/trickle', opts), { ok: false, reason: 'timeout' });
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 250 && elapsed < 2_000, `bounded by the body budget (${Math.round(elapsed)} ms)`);
    assert.deepEqual(breaker.reports, ['succeed']);
  });

  it('a call that never left the gateway (its pool is closed): release, not fail', async () => {
    const { u, breaker } = make();
    await u.pick().dispatcher.close();
    const seen = backend.seen.length;
    assert.deepEqual(await callJson(u, '/ok', opts), { ok: false, reason: 'not sent (connection pool closed)' });
    assert.deepEqual(breaker.reports, ['release']);
    assert.equal(backend.seen.length, seen);
  });

  it('a caller that already gave up: no permit taken, no call', async () => {
    const { u, breaker } = make();
    const seen = backend.seen.length;
    assert.deepEqual(await callJson(u, '/ok', { ...opts, signal: AbortSignal.abort() }), {
      ok: false,
      reason: 'aborted',
    });
    assert.deepEqual(breaker.reports, []);
    assert.equal(backend.seen.length, seen);
  });

  it('an open circuit: no call at all', async () => {
    const { u, breaker } = make(true);
    const seen = backend.seen.length;
    assert.deepEqual(await callJson(u, '/ok', opts), { ok: false, reason: 'circuit open' });
    assert.equal(backend.seen.length, seen);
    assert.deepEqual(breaker.reports, []);
  });

  it('a call retried on another target holds one circuit permit: the circuit sees only its final outcome', async () => {
    const breaker = recordingBreaker();
    const u = twoTargets(`127.0.0.1:${await closedPort()}`, backend.host, breaker);
    upstreams.push(u);
    assert.deepEqual(await callJson(u, '/ok', { ...opts, retries: 1 }), { ok: true, json: '{"a":1}' });
    assert.deepEqual(breaker.reports, ['succeed']);
  });

  it('a call retried on another target is held to the deadline of its first attempt', async () => {
    const breaker = recordingBreaker();
    const u = twoTargets(backend.host, backend.host, breaker);
    upstreams.push(u);
    const started = performance.now();
    const outcome = await callJson(u, '/503-then-silent', { ...opts, timeoutMs: 600, retries: 1 });
    const elapsed = performance.now() - started;
    assert.deepEqual(outcome, { ok: false, reason: 'timeout' });
    assert.ok(firstOf503 > 0, 'the first target answered 503 and the call went again');
    assert.ok(elapsed >= 550 && elapsed < 1_000, `one 600 ms deadline for both attempts (${Math.round(elapsed)} ms)`);
    assert.deepEqual(breaker.reports, ['fail']);
  });
});
