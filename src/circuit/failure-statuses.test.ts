import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { statusOutcome } from './failure-statuses.js';
import { createBreaker, type CircuitSettings } from './breaker.js';

describe('statusOutcome', () => {
  it('without a list: every 5xx fails, anything below 500 succeeds', () => {
    assert.deepEqual(
      [200, 404, 499, 500, 502, 599].map((s) => statusOutcome(s, undefined)),
      ['succeed', 'succeed', 'succeed', 'fail', 'fail', 'fail'],
    );
  });

  it('with a list: the statuses it names fail, another 5xx counts neither way', () => {
    assert.deepEqual(
      [200, 429, 500, 501, 502, 503, 504].map((s) => statusOutcome(s, [502, 503, 504])),
      ['succeed', 'succeed', 'release', 'release', 'fail', 'fail', 'fail'],
    );
    assert.deepEqual(
      [500, 503].map((s) => statusOutcome(s, [])),
      ['release', 'release'],
    );
  });

  it("a breaker reads its origin's list from the current settings", () => {
    let settings: CircuitSettings = { enabled: true, maxFailures: 5, timeoutSec: 30, halfOpenRequests: 1 };
    const breaker = createBreaker({ origin: 'http://a:80', settings: () => settings });
    assert.equal(breaker.failureStatuses, undefined);
    settings = { ...settings, failureStatuses: [503] };
    assert.deepEqual(breaker.failureStatuses, [503]);
  });
});
