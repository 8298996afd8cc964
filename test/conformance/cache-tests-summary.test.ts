import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatSummary, summarize, type Suite } from './cache-tests-summary.js';

const suites: Suite[] = [
  {
    id: 'a',
    tests: [
      { id: 'base' },
      { id: 'on-base', depends_on: ['base'] },
      { id: 'fast', kind: 'optimal' },
      { id: 'setup-broke', kind: 'required' },
      { id: 'asks', kind: 'check' },
      { id: 'browser', browser_only: true },
    ],
  },
  { id: 'b', tests: [{ id: 'slow', kind: 'optimal', depends_on: ['setup-broke'] }] },
];

describe('the cache-tests summary', () => {
  it('counts true results as the published figures do, and dependencies apart', () => {
    const s = summarize(suites, {
      base: ['Assertion', 'Response 2 does not come from cache'],
      'on-base': true,
      fast: true,
      'setup-broke': ['Setup', 'Response 1 status is 404, not 200'],
      asks: true,
      slow: true,
    });
    assert.deepEqual(s.required, { passed: 1, passedWithDependencies: 0, total: 3 });
    assert.deepEqual(s.optional, { passed: 2, passedWithDependencies: 1, total: 2 });
    assert.deepEqual(s.checks, { yes: 1, total: 1 });
    assert.deepEqual(
      s.failures.map((f) => [f.id, f.kind, f.verdict]),
      [
        ['base', 'required', 'fail'],
        ['setup-broke', 'required', 'setup'],
      ],
    );
  });

  it('prints the headline and the failing ids with their reasons', () => {
    const text = formatSummary(summarize(suites, { base: true, 'on-base': ['Assertion', 'Age\n is 3'] }));
    assert.match(text, /^required passed 1\/3, optional passed 0\/2 \(checks answered yes: 0\/1\)\n/);
    assert.match(
      text,
      /failing required tests \(2\):\n {2}on-base \[fail\] Assertion: Age is 3\n {2}setup-broke \[untested\]/,
    );
    assert.match(text, /failing optional tests \(2\):\n {2}fast \[untested\]\n {2}slow \[untested\]$/);
  });

  it('refuses a test kind it does not know', () => {
    assert.throws(() => summarize([{ id: 'x', tests: [{ id: 't', kind: 'bogus' }] }], {}), /unknown test kind/);
  });
});
