import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomHex, randomUuid } from './random-ids.js';
import { requestIdFor } from './request-id.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('randomUuid', () => {
  it('gives version 4, variant 10 UUIDs, all different, across several refills of the pool', () => {
    const seen = new Set<string>();
    // 4 KiB of pool is 256 UUIDs: 2,000 cross the refill several times, at every alignment.
    for (let i = 0; i < 2_000; i++) {
      const id = randomUuid();
      assert.match(id, UUID_V4);
      seen.add(id);
      if (i % 7 === 0) randomHex(3);
    }
    assert.equal(seen.size, 2_000);
  });

  it('returns a string of its own: the next call does not change it', () => {
    const first = randomUuid();
    const copy = `${first}`;
    randomUuid();
    assert.equal(first, copy);
  });

  it('spreads its random hex digits evenly (no position stuck)', () => {
    const counts = Array.from({ length: 36 }, () => new Map<string, number>());
    for (let i = 0; i < 4_000; i++) {
      const id = randomUuid();
      for (let c = 0; c < 36; c++) counts[c]!.set(id[c]!, (counts[c]!.get(id[c]!) ?? 0) + 1);
    }
    for (let c = 0; c < 36; c++) {
      if ([8, 13, 18, 23].includes(c)) assert.deepEqual([...counts[c]!.keys()], ['-']);
      else if (c === 14) assert.deepEqual([...counts[c]!.keys()], ['4']);
      else if (c === 19) assert.deepEqual([...counts[c]!.keys()].sort(), ['8', '9', 'a', 'b']);
      // 16 digits, 4,000 draws: 250 each on average; below 150 would be far outside chance.
      else for (const n of counts[c]!.values()) assert.ok(n > 150, `position ${c}: a digit seen ${n} times`);
    }
  });
});

describe('requestIdFor', () => {
  it('keeps a usable client id and replaces a missing, repeated or unprintable one with a UUID', () => {
    assert.equal(requestIdFor('client-id-1'), 'client-id-1');
    for (const bad of [undefined, ['a', 'b'], 'has space', 'x'.repeat(129), ''])
      assert.match(requestIdFor(bad), UUID_V4, JSON.stringify(bad));
  });
});
