import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createArmChooser } from './choose-arm.js';

const arms = (...weights: number[]) => weights.map((weight, i) => ({ name: `arm${i}`, weight }));

function countNext(weights: number[], n: number): number[] {
  const chooser = createArmChooser(arms(...weights));
  const counts = weights.map(() => 0);
  for (let i = 0; i < n; i++) counts[chooser.next()]!++;
  return counts;
}

describe('createArmChooser', () => {
  it('splits 10,000 requests 90/10 exactly', () => {
    assert.deepEqual(countNext([90, 10], 10_000), [9_000, 1_000]);
  });

  it('spreads a small arm evenly: one in every ten requests, never two in a row', () => {
    const chooser = createArmChooser(arms(90, 10));
    const picks = Array.from({ length: 100 }, () => chooser.next());
    for (let block = 0; block < 10; block++)
      assert.equal(picks.slice(block * 10, block * 10 + 10).filter((p) => p === 1).length, 1);
  });

  it('honours three arms and never picks a weight of 0', () => {
    assert.deepEqual(countNext([5, 0, 3, 2], 1_000), [500, 0, 300, 200]);
  });

  it('keeps a key on one arm, and sticky keys spread by weight', () => {
    const chooser = createArmChooser(arms(90, 10));
    const counts = [0, 0];
    for (let i = 0; i < 10_000; i++) {
      const key = `user-${i}`;
      const arm = chooser.forKey(key);
      assert.equal(chooser.forKey(key), arm);
      counts[arm]!++;
    }
    // Hashing is not exact: within 1.5 points of 90/10 over 10,000 distinct keys.
    assert.ok(Math.abs(counts[1]! / 10_000 - 0.1) < 0.015, `canary share ${counts[1]! / 10_000}`);
  });

  it('gives the same answer in a new chooser with the same weights (a reload moves nobody)', () => {
    const a = createArmChooser(arms(90, 10));
    const b = createArmChooser(arms(90, 10));
    for (let i = 0; i < 1_000; i++) assert.equal(a.forKey(`k${i}`), b.forKey(`k${i}`));
  });

  it('moves only the keys that must move when the weights change: 90/10 to 80/20', () => {
    const before = createArmChooser(arms(90, 10));
    const after = createArmChooser(arms(80, 20));
    let moved = 0;
    for (let i = 0; i < 10_000; i++) {
      const was = before.forKey(`user-${i}`);
      const now = after.forKey(`user-${i}`);
      if (was === 1) assert.equal(now, 1, `user-${i} left the canary`);
      if (was !== now) moved++;
    }
    // A tenth of the clients must move (from 90% to 80% on the first arm): about 1,000.
    assert.ok(moved > 800 && moved < 1_200, `moved ${moved}`);
  });

  it('moves nobody when the arms are listed in another order', () => {
    const a = createArmChooser([
      { name: 'v1', weight: 70 },
      { name: 'v2', weight: 30 },
    ]);
    const b = createArmChooser([
      { name: 'v2', weight: 30 },
      { name: 'v1', weight: 70 },
    ]);
    for (let i = 0; i < 1_000; i++)
      assert.equal(a.forKey(`k${i}`) === 0 ? 'v1' : 'v2', b.forKey(`k${i}`) === 0 ? 'v2' : 'v1');
  });
});
