import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pool } from 'undici';
import { TargetSet } from './targets.js';
import { smoothWeightedOrder } from './weighted-order.js';
import type { ClientTls, Origin, UpstreamSpec } from '../config/types.js';
import { createEventBus, type EventBus } from '../observability/events.js';

const origin = (n: number) => ({ key: `http://10.0.0.${n}:80`, hostHeader: `10.0.0.${n}` }) as Origin;

function set(
  targets: number,
  outlier: Partial<UpstreamSpec['outlier']> = {},
  balance: UpstreamSpec['balance'] = 'round-robin',
  events?: EventBus,
) {
  let clock = 0;
  const spec: UpstreamSpec = {
    name: 'u',
    targets: Array.from({ length: targets }, (_, i) => ({ origin: origin(i + 1), weight: 1 })),
    balance,
    http2: false,
    dnsRefreshMs: 30_000,
    outlier: { enabled: true, consecutiveFailures: 2, baseEjectionMs: 1000, maxEjectionPercent: 50, ...outlier },
  };
  const s = new TargetSet({
    spec,
    makePool: (origin, _streaming, health) => ({ dispatcher: {} as Pool, inFlight: 0, connections: 1, origin, health }),
    events,
    now: () => clock,
  });
  return { s, spec, advance: (ms: number) => (clock += ms) };
}

describe('smoothWeightedOrder', () => {
  it('interleaves by weight', () => {
    assert.deepEqual(smoothWeightedOrder([5, 1, 1]), [0, 0, 1, 0, 2, 0, 0]);
    assert.deepEqual(smoothWeightedOrder([1, 1, 1]), [0, 1, 2]);
  });
});

describe('TargetSet', () => {
  it('gives every target new pools when the TLS changes, keeping its health; the old pools are handed back', () => {
    const { s, spec } = set(2);
    const tls = (id: string) => ({ id, rejectUnauthorized: true }) as ClientTls;
    const [a, b] = s.targets;
    b!.health.record(true);
    assert.deepEqual(s.apply({ ...spec, tls: tls('one') }).length, 2, 'undefined to one: two pools drain');
    const [a1, b1] = s.targets;
    assert.notEqual(a1!.pool, a!.pool);
    assert.equal(b1!.health, b!.health);
    assert.equal(b1!.health.consecutiveFailures, 1);
    assert.deepEqual(s.apply({ ...spec, tls: tls('one') }), [], 'the same TLS keeps the pools');
    assert.equal(s.targets[0]!.pool, a1!.pool);
    s.pickFor('stream');
    const gone = s.apply({ ...spec, tls: tls('two') });
    assert.equal(gone.length, 3, 'both pools and the stream pool drain');
    assert.ok(gone.includes(a1!.pool) && gone.includes(b1!.pool));
  });
  it('ejects after consecutive failures, skips the target, restores it after its time, doubling the next', () => {
    const { s, advance } = set(3);
    const [a, b] = s.targets;
    b!.health.record(true);
    b!.health.record(true);
    assert.ok(b!.health.ejectedUntil > 0);
    const picked = Array.from({ length: 6 }, () => s.pick().key);
    assert.ok(!picked.includes(b!.key), picked.join());
    advance(1000);
    assert.ok(Array.from({ length: 3 }, () => s.pick().key).includes(b!.key));
    b!.health.record(true);
    b!.health.record(true);
    assert.equal(b!.health.ejectedUntil, 1000 + 2000);
    assert.equal(a!.health.ejectedUntil, 0);
  });
  it('never ejects more than maxEjectionPercent of the targets; a success resets the run', () => {
    const { s } = set(3);
    for (const t of s.targets) {
      t.health.record(true);
      t.health.record(false);
      t.health.record(true);
    }
    assert.ok(
      s.targets.every((t) => t.health.ejectedUntil === 0),
      'a success between failures',
    );
    for (const t of s.targets) for (let i = 0; i < 2; i++) t.health.record(true);
    assert.equal(s.targets.filter((t) => t.health.ejectedUntil > 0).length, 1, '1 of 3 is at most 50%');
  });
  it('says once when a target starts failing and once when it answers again, and nothing per call', () => {
    const bus = createEventBus();
    const states: string[] = [];
    bus.on('upstream:target', (e) => states.push(`${e.target} ${e.state}`));
    const { s } = set(3, { consecutiveFailures: 100 }, 'round-robin', bus);
    const b = s.targets[1]!;
    b.health.record(false);
    for (let i = 0; i < 5; i++) b.health.record(true);
    assert.equal(b.health.failing, true);
    b.health.record(false);
    b.health.record(false);
    assert.equal(b.health.failing, false);
    assert.deepEqual(states, [`${b.key} failing`, `${b.key} recovered`]);
  });
  it('a single target is never ejected', () => {
    const { s } = set(1);
    for (let i = 0; i < 10; i++) s.targets[0]!.health.record(true);
    assert.equal(s.targets[0]!.health.ejectedUntil, 0);
  });
  it('a reload keeps the pools and health of targets that stay and returns the removed ones', () => {
    const { s, spec } = set(3);
    const kept = s.targets[0]!;
    const removed = s.apply({ ...spec, targets: [spec.targets[0]!, { origin: origin(9), weight: 2 }] });
    assert.equal(s.targets[0], kept);
    assert.deepEqual(
      removed.map((p) => p.origin.key),
      [origin(2).key, origin(3).key],
    );
  });
});
