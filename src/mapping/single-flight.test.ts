import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSingleFlight } from './single-flight.js';

describe('createSingleFlight', () => {
  it('shares one running call per key and forgets it once settled', async () => {
    const flight = createSingleFlight<number>();
    let calls = 0;
    let release!: (v: number) => void;
    const call = () => {
      calls++;
      return new Promise<number>((r) => (release = r));
    };
    const a = flight.run('k', call);
    const b = flight.run('k', call);
    const other = flight.run('j', () => Promise.resolve(7));
    assert.deepEqual([a.joined, b.joined, other.joined], [false, true, false]);
    assert.equal(calls, 1);
    assert.equal(flight.size, 2);
    release(5);
    assert.deepEqual(await Promise.all([a.promise, b.promise, other.promise]), [5, 5, 7]);
    assert.equal(flight.size, 0);
    const c = flight.run('k', () => Promise.resolve(6));
    assert.equal(c.joined, false);
    assert.equal(await c.promise, 6);
  });
});
