import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createCircuitRegistry, originsOf } from './registry.js';
import { createEventBus, type GatewayEvents } from '../observability/events.js';
import { loadConfigText } from '../config/load.js';
import type { CircuitSettings } from './breaker.js';

const ON: CircuitSettings = { enabled: true, maxFailures: 2, timeoutSec: 30, halfOpenRequests: 1 };
const A = 'http://a:80';
const B = 'http://b:80';

function setup(settings: CircuitSettings = ON) {
  let t = 0;
  const events = createEventBus();
  const changes: GatewayEvents['circuit:change'][] = [];
  events.on('circuit:change', (e) => changes.push(e));
  const registry = createCircuitRegistry({ settings, events, now: () => t });
  const openCircuit = (origin: string) => {
    for (let i = 0; i < 2; i++) registry.forOrigin(origin).acquire()!.fail();
  };
  return { registry, changes, openCircuit, advance: (ms: number) => (t += ms) };
}

describe('createCircuitRegistry', () => {
  it('one circuit per origin, the same object every time', () => {
    const { registry } = setup();
    assert.equal(registry.forOrigin(A), registry.forOrigin(A));
    assert.notEqual(registry.forOrigin(A), registry.forOrigin(B));
  });

  it('circuits are isolated: one open circuit leaves the others closed', () => {
    const { registry, openCircuit } = setup();
    openCircuit(A);
    assert.equal(registry.forOrigin(A).acquire(), undefined);
    assert.ok(registry.forOrigin(B).acquire());
    assert.deepEqual(registry.snapshot(), [
      { origin: A, state: 'open', consecutiveFailures: 2 },
      { origin: B, state: 'closed', consecutiveFailures: 0 },
    ]);
  });

  it('emits circuit:change with origin, from, to and consecutive failures', () => {
    const { changes, openCircuit } = setup();
    openCircuit(A);
    assert.deepEqual(changes, [{ origin: A, from: 'closed', to: 'open', consecutiveFailures: 2 }]);
  });

  it('configure: new settings reach existing circuits without losing state', () => {
    const { registry, openCircuit, advance } = setup();
    openCircuit(A);
    registry.configure({ ...ON, timeoutSec: 5, halfOpenRequests: 2 });
    assert.equal(registry.forOrigin(A).state, 'open');
    advance(5_000);
    assert.ok(registry.forOrigin(A).acquire());
    assert.ok(registry.forOrigin(A).acquire());
    assert.equal(registry.forOrigin(A).acquire(), undefined);
  });

  it('configure: disabling closes every circuit and admits everything; re-enabling starts closed', () => {
    const { registry, changes, openCircuit } = setup();
    openCircuit(A);
    registry.configure({ ...ON, enabled: false });
    assert.deepEqual(registry.snapshot(), [{ origin: A, state: 'closed', consecutiveFailures: 0 }]);
    assert.deepEqual(changes.at(-1), { origin: A, from: 'open', to: 'closed', consecutiveFailures: 0 });
    for (let i = 0; i < 5; i++) registry.forOrigin(A).acquire()!.fail();
    assert.equal(registry.forOrigin(A).state, 'closed');
    registry.configure(ON);
    registry.forOrigin(A).acquire()!.fail();
    assert.equal(registry.forOrigin(A).state, 'closed');
    registry.forOrigin(A).acquire()!.fail();
    assert.equal(registry.forOrigin(A).state, 'open');
  });

  it('a disabled registry can be enabled by a reload', () => {
    const { registry, openCircuit } = setup({ ...ON, enabled: false });
    openCircuit(A);
    assert.equal(registry.forOrigin(A).state, 'closed');
    registry.configure(ON);
    openCircuit(A);
    assert.equal(registry.forOrigin(A).state, 'open');
  });

  it('retain: origins still configured keep their state; the others are closed and unlisted', () => {
    const { registry, openCircuit } = setup();
    openCircuit(A);
    openCircuit(B);
    registry.retain([A]);
    assert.deepEqual(registry.snapshot(), [{ origin: A, state: 'open', consecutiveFailures: 2 }]);
    assert.equal(registry.forOrigin(B).state, 'closed', 'an origin added back starts closed');
    assert.deepEqual(
      registry.snapshot().map((c) => c.origin),
      [A, B],
    );
  });
});

describe('originsOf', () => {
  it('lists route and mapping-rule origins once each', () => {
    const loaded = loadConfigText(`
routes:
  - method: GET
    route: /posts
    service: posts:3000
    path: /posts
    mapping:
      - { path: "/users/{authorId}", service: "http://users:3001", tag: author }
  - method: GET
    route: /users
    service: users:3001
    path: /users
`);
    assert.ok(loaded.ok);
    assert.deepEqual([...originsOf(loaded.config)].sort(), ['http://posts:3000', 'http://users:3001']);
  });
});
