import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createBreaker, createDisabledBreaker, type CircuitChange, type CircuitSettings } from './breaker.js';
import { type CircuitPermit } from './types.js';

const ORIGIN = 'http://users:80';

function setup(overrides: Partial<CircuitSettings> = {}) {
  let t = 1_000;
  let settings: CircuitSettings = { enabled: true, maxFailures: 3, timeoutSec: 10, halfOpenRequests: 1, ...overrides };
  const changes: CircuitChange[] = [];
  const breaker = createBreaker({
    origin: ORIGIN,
    settings: () => settings,
    now: () => t,
    onChange: (c) => changes.push(c),
  });
  return {
    breaker,
    changes,
    advance(ms: number) {
      t += ms;
    },
    set(next: Partial<CircuitSettings>) {
      settings = { ...settings, ...next };
    },
    /** Acquires and fails `n` permits in turn. */
    failTimes(n: number) {
      for (let i = 0; i < n; i++) must(breaker.acquire()).fail();
    },
  };
}

function must(p: CircuitPermit | undefined): CircuitPermit {
  assert.ok(p, 'expected a permit');
  return p;
}

function open(s: ReturnType<typeof setup>) {
  s.failTimes(3);
  assert.equal(s.breaker.state, 'open');
}

/** A breaker opened, then left until its timeoutSec has elapsed: the next acquire is a probe. */
function openPastTimeout(overrides: Partial<CircuitSettings> = {}) {
  const s = setup(overrides);
  open(s);
  s.advance(10_000);
  return s;
}

describe('createBreaker: the transition table, row by row', () => {
  it('Closed, request, normal operation: Closed, every request passes', () => {
    const s = setup();
    for (let i = 0; i < 100; i++) must(s.breaker.acquire()).succeed();
    assert.equal(s.breaker.state, 'closed');
    assert.equal(s.breaker.consecutiveFailures, 0);
    assert.equal(s.breaker.retryAfterSec(), 0);
    assert.deepEqual(s.changes, []);
  });

  it('Closed, backend responses: opens after maxFailures consecutive failures, not before', () => {
    const s = setup();
    s.failTimes(2);
    assert.equal(s.breaker.state, 'closed');
    assert.equal(s.breaker.consecutiveFailures, 2);
    s.failTimes(1);
    assert.equal(s.breaker.state, 'open');
    assert.equal(s.breaker.consecutiveFailures, 3);
    assert.deepEqual(s.changes, [{ origin: ORIGIN, from: 'closed', to: 'open', consecutiveFailures: 3 }]);
  });

  const settledInClosed: { name: string; settle: (p: CircuitPermit) => void; failuresAfter: number }[] = [
    { name: 'Closed: a success resets the consecutive count', settle: (p) => p.succeed(), failuresAfter: 0 },
    { name: 'Closed: a released permit counts nothing', settle: (p) => p.release(), failuresAfter: 2 },
  ];
  for (const c of settledInClosed) {
    it(c.name, () => {
      const s = setup();
      s.failTimes(2);
      c.settle(must(s.breaker.acquire()));
      assert.equal(s.breaker.consecutiveFailures, c.failuresAfter);
      // Counting on from there, maxFailures consecutive failures open the breaker, one fewer does not.
      s.failTimes(2 - c.failuresAfter);
      assert.equal(s.breaker.state, 'closed');
      s.failTimes(1);
      assert.equal(s.breaker.state, 'open');
    });
  }

  it('Open, any request: rejected at once, until timeoutSec has elapsed', () => {
    const s = setup();
    open(s);
    assert.equal(s.breaker.acquire(), undefined);
    assert.equal(s.breaker.retryAfterSec(), 10);
    s.advance(1_500);
    assert.equal(s.breaker.retryAfterSec(), 9, 'rounded up to whole seconds');
    s.advance(8_499);
    assert.equal(s.breaker.acquire(), undefined);
    assert.equal(s.breaker.state, 'open');
    assert.equal(s.breaker.retryAfterSec(), 1);
  });

  it('Open, time: Half-Open on the first request after timeoutSec (lazily, no timer)', () => {
    const s = openPastTimeout();
    assert.equal(s.breaker.state, 'open', 'nothing happens without a request');
    const probe = s.breaker.acquire();
    assert.ok(probe);
    assert.equal(s.breaker.state, 'half-open');
    assert.deepEqual(s.changes.at(-1), { origin: ORIGIN, from: 'open', to: 'half-open', consecutiveFailures: 3 });
  });

  it('Half-Open: at most halfOpenRequests probes at a time, the others rejected', () => {
    const s = openPastTimeout({ halfOpenRequests: 1 });
    const probe = must(s.breaker.acquire());
    for (let i = 0; i < 199; i++) assert.equal(s.breaker.acquire(), undefined);
    assert.equal(s.breaker.retryAfterSec(), 1);
    probe.succeed();
    assert.equal(s.breaker.state, 'closed');
  });

  it('Half-Open, probe succeeds: Closed, requests pass normally', () => {
    const s = openPastTimeout();
    must(s.breaker.acquire()).succeed();
    assert.equal(s.breaker.state, 'closed');
    assert.equal(s.breaker.consecutiveFailures, 0);
    assert.deepEqual(s.changes.at(-1), { origin: ORIGIN, from: 'half-open', to: 'closed', consecutiveFailures: 0 });
    for (let i = 0; i < 10; i++) must(s.breaker.acquire()).succeed();
    // A fresh closed period: maxFailures failures again before it opens.
    s.failTimes(2);
    assert.equal(s.breaker.state, 'closed');
  });

  it('Half-Open, probe fails: Open again, and the timer restarts', () => {
    const s = openPastTimeout();
    must(s.breaker.acquire()).fail();
    assert.equal(s.breaker.state, 'open');
    assert.deepEqual(s.changes.at(-1), { origin: ORIGIN, from: 'half-open', to: 'open', consecutiveFailures: 4 });
    assert.equal(s.breaker.acquire(), undefined);
    assert.equal(s.breaker.retryAfterSec(), 10);
    s.advance(9_999);
    assert.equal(s.breaker.acquire(), undefined);
    s.advance(1);
    assert.ok(s.breaker.acquire());
    assert.equal(s.breaker.state, 'half-open');
  });

  it('Half-Open with halfOpenRequests 3: three concurrent probes; three successes close it', () => {
    const s = openPastTimeout({ halfOpenRequests: 3 });
    const probes = [must(s.breaker.acquire()), must(s.breaker.acquire()), must(s.breaker.acquire())];
    assert.equal(s.breaker.acquire(), undefined);
    probes[0]!.succeed();
    assert.equal(s.breaker.state, 'half-open');
    // A finished probe frees its slot: at most 3 in flight, not 3 in total.
    const fourth = must(s.breaker.acquire());
    assert.equal(s.breaker.acquire(), undefined);
    probes[1]!.succeed();
    assert.equal(s.breaker.state, 'half-open');
    probes[2]!.succeed();
    assert.equal(s.breaker.state, 'closed');
    fourth.fail();
    assert.equal(s.breaker.state, 'closed', 'a probe of the finished half-open period counts nothing');
    assert.equal(s.breaker.consecutiveFailures, 0);
  });

  it('Half-Open with halfOpenRequests 3: one failed probe reopens, the other probes then count nothing', () => {
    const s = openPastTimeout({ halfOpenRequests: 3 });
    const probes = [must(s.breaker.acquire()), must(s.breaker.acquire()), must(s.breaker.acquire())];
    probes[0]!.succeed();
    probes[1]!.fail();
    assert.equal(s.breaker.state, 'open');
    probes[2]!.succeed();
    assert.equal(s.breaker.state, 'open');
    assert.equal(s.breaker.acquire(), undefined);
  });

  it('Half-Open: a released probe frees its slot and counts nothing', () => {
    const s = openPastTimeout();
    must(s.breaker.acquire()).release();
    assert.equal(s.breaker.state, 'half-open');
    const probe = must(s.breaker.acquire());
    assert.equal(s.breaker.acquire(), undefined);
    probe.succeed();
    assert.equal(s.breaker.state, 'closed');
  });

  it('a permit settles once: a second outcome is ignored', () => {
    const s = openPastTimeout({ halfOpenRequests: 2 });
    const probe = must(s.breaker.acquire());
    probe.release();
    probe.release();
    probe.succeed();
    // Two slots free, not three: the double release did not free a slot twice.
    must(s.breaker.acquire());
    must(s.breaker.acquire());
    assert.equal(s.breaker.acquire(), undefined);
  });

  it('outcomes of requests admitted while closed are ignored once the circuit has opened', () => {
    const s = setup();
    const late = [must(s.breaker.acquire()), must(s.breaker.acquire())];
    open(s);
    s.advance(5_000);
    late[0]!.fail();
    s.advance(5_000);
    assert.ok(s.breaker.acquire(), 'a late failure does not restart the open timer');
    late[1]!.succeed();
    assert.equal(s.breaker.state, 'half-open', 'a late success does not close the circuit');
  });

  it('emits one change per transition, in order', () => {
    const s = openPastTimeout();
    must(s.breaker.acquire()).fail();
    s.advance(10_000);
    must(s.breaker.acquire()).succeed();
    assert.deepEqual(
      s.changes.map((c) => `${c.from}->${c.to}`),
      ['closed->open', 'open->half-open', 'half-open->open', 'open->half-open', 'half-open->closed'],
    );
  });

  it('reads its settings on every call: a new configuration applies without losing state', () => {
    const s = setup();
    open(s);
    s.set({ timeoutSec: 2, halfOpenRequests: 2 });
    assert.equal(s.breaker.state, 'open');
    assert.equal(s.breaker.retryAfterSec(), 2);
    s.advance(2_000);
    must(s.breaker.acquire());
    must(s.breaker.acquire());
    assert.equal(s.breaker.acquire(), undefined);
  });

  it('a lower maxFailures opens at the next failure', () => {
    const s = setup({ maxFailures: 5 });
    s.failTimes(3);
    s.set({ maxFailures: 2 });
    assert.equal(s.breaker.state, 'closed');
    s.failTimes(1);
    assert.equal(s.breaker.state, 'open');
  });

  it('fractional timeoutSec', () => {
    const s = setup({ timeoutSec: 0.3 });
    open(s);
    assert.equal(s.breaker.retryAfterSec(), 1);
    s.advance(299);
    assert.equal(s.breaker.acquire(), undefined);
    s.advance(1);
    assert.ok(s.breaker.acquire());
  });

  it('while disabled: admits everything and counts nothing', () => {
    const s = setup({ enabled: false });
    s.failTimes(10);
    assert.equal(s.breaker.state, 'closed');
    assert.equal(s.breaker.consecutiveFailures, 0);
    assert.equal(s.breaker.retryAfterSec(), 0);
  });

  it('reset: back to closed with a zero count; permits of before count nothing', () => {
    const s = setup();
    const before = must(s.breaker.acquire());
    open(s);
    s.breaker.reset();
    assert.equal(s.breaker.state, 'closed');
    assert.equal(s.breaker.consecutiveFailures, 0);
    assert.deepEqual(s.changes.at(-1), { origin: ORIGIN, from: 'open', to: 'closed', consecutiveFailures: 0 });
    s.failTimes(2);
    const stale = must(s.breaker.acquire());
    s.breaker.reset();
    stale.fail();
    before.fail();
    assert.equal(s.breaker.consecutiveFailures, 0);
    assert.equal(s.changes.length, 2, 'resetting a closed circuit is no transition');
  });

  it('accepts a plain settings object', () => {
    const b = createBreaker({
      origin: ORIGIN,
      settings: { enabled: true, maxFailures: 1, timeoutSec: 30, halfOpenRequests: 1 },
      now: () => 0,
    });
    must(b.acquire()).fail();
    assert.equal(b.state, 'open');
    assert.equal(b.retryAfterSec(), 30);
  });
});

describe('createDisabledBreaker', () => {
  it('always closed, always admits', () => {
    const b = createDisabledBreaker(ORIGIN);
    for (let i = 0; i < 10; i++) must(b.acquire()).fail();
    assert.equal(b.state, 'closed');
    assert.equal(b.retryAfterSec(), 0);
  });
});
