import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSingleFlight } from './single-flight.js';
import { heldCall } from '../../test/support/held-call.js';

describe('createSingleFlight', () => {
  it('shares one running call per key and forgets it once settled', async () => {
    const flight = createSingleFlight<number>();
    const held = heldCall<number>();
    const a = flight.run('k', held.call);
    const b = flight.run('k', held.call);
    const other = flight.run('j', () => Promise.resolve(7));
    assert.deepEqual([a.joined, b.joined, other.joined], [false, true, false]);
    assert.equal(held.calls(), 1);
    assert.equal(flight.size, 2);
    held.settle(5);
    assert.deepEqual(await Promise.all([a.promise, b.promise, other.promise]), [5, 5, 7]);
    assert.equal(flight.size, 0);
    const c = flight.run('k', () => Promise.resolve(6));
    assert.equal(c.joined, false);
    assert.equal(await c.promise, 6);
  });
});
