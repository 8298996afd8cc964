import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SecondRing } from './second-ring.js';

describe('SecondRing', () => {
  it('sums the counters of the seconds asked for', () => {
    const ring = new SecondRing(10, 2, false);
    ring.add(100, 0);
    ring.add(100, 0);
    ring.add(101, 0, 5);
    ring.add(101, 1);
    assert.deepEqual(ring.sum(101, 2).fields, [7, 1]);
    assert.deepEqual(ring.sum(101, 1).fields, [5, 1]);
    assert.deepEqual(ring.sum(100, 1).fields, [2, 0]);
  });

  it('forgets seconds that left the window, and clears the rows it skips over', () => {
    const ring = new SecondRing(3, 1, false);
    ring.add(10, 0, 1);
    ring.add(11, 0, 2);
    ring.add(12, 0, 4);
    // Second 13 reuses second 10's row: 10 is gone, 11 and 12 stay.
    ring.add(13, 0, 8);
    assert.deepEqual(ring.sum(13, 3).fields, [14]);
    // Jumping far ahead clears everything in between.
    ring.add(40, 0, 16);
    assert.deepEqual(ring.sum(40, 3).fields, [16]);
    assert.deepEqual(ring.sum(39, 2).fields, [0]);
  });

  it('drops a record for a second older than the window', () => {
    const ring = new SecondRing(3, 1, false);
    ring.add(20, 0);
    ring.add(17, 0);
    assert.deepEqual(ring.sum(20, 3).fields, [1]);
  });

  it('reads a second never recorded as zero, without stale rows', () => {
    const ring = new SecondRing(3, 1, true);
    ring.add(5, 0, 3);
    ring.observe(5, 2);
    assert.deepEqual(ring.second(7, [0.5]), { fields: [0], percentiles: [null] });
    const five = ring.second(5, [0.5]);
    assert.deepEqual(five.fields, [3]);
    assert.ok(five.percentiles[0]! > 1.5 && five.percentiles[0]! <= 2.6, `p50 ${five.percentiles[0]}`);
  });
});
