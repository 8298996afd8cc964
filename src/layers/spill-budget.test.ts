import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSpillBudget, createSpillReservation } from './spill-budget.js';

const CAPS = { maxBytes: 100, maxBytesPerClient: 60 };

describe('spill budget', () => {
  it('refuses past the client cap with "client", past the total cap with "total", and reserves nothing then', () => {
    const budget = createSpillBudget();
    assert.equal(budget.reserve('a', 50, CAPS), undefined);
    assert.equal(budget.reserve('a', 11, CAPS), 'client');
    assert.equal(budget.reserve('b', 51, CAPS), 'total');
    assert.equal(budget.reserve('b', 51, { ...CAPS, maxBytesPerClient: 20 }), 'client', 'the client cap is told first');
    assert.deepEqual([budget.bytes, budget.bytesOf('a'), budget.bytesOf('b')], [50, 50, 0]);
    assert.equal(budget.reserve('b', 50, CAPS), undefined, 'exactly at the cap is allowed');
    assert.equal(budget.bytes, 100);
  });

  it('releases back to zero and forgets a client holding nothing', () => {
    const budget = createSpillBudget();
    budget.reserve('a', 30, CAPS);
    budget.reserve('b', 20, CAPS);
    budget.release('a', 30);
    budget.release('b', 20);
    assert.equal(budget.bytes, 0);
    assert.equal(budget.bytesOf('a'), 0);
    assert.equal(budget.reserve('a', 60, CAPS), undefined);
  });

  it('a reservation grows by the difference, keeps what it holds when refused, and releases once', () => {
    const budget = createSpillBudget();
    const r = createSpillReservation(budget, () => 'a', CAPS);
    assert.equal(r.holdUpTo(10), undefined);
    assert.equal(r.holdUpTo(5), undefined, 'holding more than asked reserves nothing');
    assert.equal(r.holdUpTo(40), undefined);
    assert.equal(budget.bytes, 40);
    assert.equal(r.holdUpTo(61), 'client');
    assert.equal(r.bytes, 40);
    r.release();
    r.release();
    assert.equal(budget.bytes, 0);
  });
});
