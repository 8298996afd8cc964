import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mapEach, runInSlices, runWhole, SLICE_MS, type Work } from './sliced-work.js';
import { turnsDuring } from '../../test/support/event-loop-turns.js';

/** Work of `items` pieces, each holding the thread for at least 1 ms; returns their squares. */
function* busyWork(items: number): Work<number[]> {
  return yield* mapEach(
    Array.from({ length: items }, (_, i) => i),
    (i) => {
      const until = performance.now() + 1;
      while (performance.now() < until);
      return i * i;
    },
  );
}

describe('sliced work', () => {
  it('gives the same result whole and in slices', async () => {
    const squares = Array.from({ length: 30 }, (_, i) => i * i);
    assert.deepEqual(runWhole(busyWork(30)), squares);
    assert.deepEqual(await runInSlices(busyWork(30)), squares);
  });

  it('holds the event loop for about SLICE_MS at a time in slices, and throughout when whole', async () => {
    // 40 pieces of at least 1 ms: a slice ends once SLICE_MS has passed, so after SLICE_MS pieces at most.
    assert.equal(await turnsDuring(() => runWhole(busyWork(40))), 0);
    assert.ok((await turnsDuring(() => runInSlices(busyWork(40)))) >= Math.floor(40 / SLICE_MS) - 1);
  });

  it('passes a throw of the work on, in slices as whole', async () => {
    function* failing(): Work<void> {
      yield;
      throw new Error('a bug while building');
    }
    assert.throws(() => runWhole(failing()), /a bug while building/);
    await assert.rejects(runInSlices(failing(), 0), /a bug while building/);
  });
});
