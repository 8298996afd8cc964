import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSampler } from './sample.js';

const take = (percent: number, n: number) => {
  const sample = createSampler(percent);
  return Array.from({ length: n }, () => sample());
};

describe('createSampler', () => {
  it('copies every request at 100 and none at 0', () => {
    assert.ok(take(100, 50).every(Boolean));
    assert.ok(!take(0, 50).some(Boolean));
  });

  it('copies every second request at 50, starting with the second', () => {
    assert.deepEqual(take(50, 6), [false, true, false, true, false, true]);
  });

  it('copies exactly the share asked for, fractions included', () => {
    assert.equal(take(10, 1_000).filter(Boolean).length, 100);
    assert.equal(take(12.5, 800).filter(Boolean).length, 100);
  });
});
