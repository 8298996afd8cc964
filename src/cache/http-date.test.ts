import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseHttpDate } from './http-date.js';

const T = Date.UTC(2050, 7, 18, 2, 1, 18);
const NOW = Date.UTC(2026, 10, 28);

describe('HTTP-date (RFC 9110 5.6.7)', () => {
  it('reads IMF-fixdate, rfc850 and asctime, names in any case', () => {
    assert.equal(parseHttpDate('Thu, 18 Aug 2050 02:01:18 GMT'), T);
    assert.equal(parseHttpDate('THU, 18 AUG 2050 02:01:18 gMT'), T);
    assert.equal(parseHttpDate('Thursday, 18-Aug-50 02:01:18 GMT', NOW), T);
    assert.equal(parseHttpDate('Thu Aug 18 02:01:18 2050'), T);
    assert.equal(parseHttpDate('Thu Aug  8 02:01:18 2050'), Date.UTC(2050, 7, 8, 2, 1, 18));
  });

  it('takes a two-digit year more than 50 years ahead as the past', () => {
    assert.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW), Date.UTC(1994, 10, 6, 8, 49, 37));
  });

  it('refuses what Date.parse would read but HTTP does not', () => {
    for (const bad of [
      'Thu, 18 Aug 2050 02:01:18 UTC',
      'Thu, 18 Aug 2050 02:01:18 AEST',
      'Thu, 18 Aug 50 02:01:18 GMT',
      'Thu 18 Aug 2050 02:01:18 GMT',
      'Thu, 18  Aug  2050 02:01:18 GMT',
      'Thu, 18-Aug-2050 02:01:18 GMT',
      'Thu, 18 Aug 2050 02.01.18 GMT',
      'Thu, 18 Aug 2050 2:01:18 GMT',
      'Thu, 18 Aug 2050 25:01:18 GMT',
      '0',
      '2050-08-18T02:01:18Z',
    ])
      assert.equal(parseHttpDate(bad), undefined, bad);
    assert.equal(parseHttpDate(['Thu, 18 Aug 2050 02:01:18 GMT', 'Thu, 18 Aug 2050 02:01:19 GMT']), undefined);
  });
});
