import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { byteRange, ifRangeHolds } from './range.js';

describe('a Range answered from a stored answer', () => {
  it('reads one byte range: first-last, open-ended, suffix; clamps the last byte', () => {
    assert.deepEqual(byteRange('bytes=0-1', 11), { start: 0, end: 1 });
    assert.deepEqual(byteRange('bytes=5-', 11), { start: 5, end: 10 });
    assert.deepEqual(byteRange('bytes=-3', 11), { start: 8, end: 10 });
    assert.deepEqual(byteRange('bytes=-30', 11), { start: 0, end: 10 });
    assert.deepEqual(byteRange('bytes=4-99', 11), { start: 4, end: 10 });
  });

  it('serves the whole answer for anything else', () => {
    for (const r of [undefined, 'bytes=0-1,3-4', 'items=0-1', 'bytes=5-2', 'bytes=11-', 'bytes=-0', 'bytes=-'])
      assert.equal(byteRange(r, 11), undefined, String(r));
    assert.equal(byteRange('bytes=0-1', 0), undefined);
  });

  it('holds If-Range to the strong ETag or the Last-Modified sent', () => {
    const lm = 'Mon, 02 Nov 2026 10:00:00 GMT';
    assert.equal(ifRangeHolds(undefined, undefined, undefined), true);
    assert.equal(ifRangeHolds('"a"', '"a"', undefined), true);
    assert.equal(ifRangeHolds('"a"', 'W/"a"', undefined), false);
    assert.equal(ifRangeHolds('"b"', '"a"', lm), false);
    assert.equal(ifRangeHolds(lm, '"a"', lm), true);
    assert.equal(ifRangeHolds('Tue, 03 Nov 2026 10:00:00 GMT', undefined, lm), false);
  });
});
