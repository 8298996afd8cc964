import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCacheControl } from './cache-control.js';
import {
  conditionalHeaders,
  mayServeWhileRevalidating,
  notModifiedMatches,
  staleWhileRevalidateSec,
  updatedHead,
} from './revalidation.js';
import { requestLimits } from './storable.js';

const LM = 'Mon, 02 Nov 2026 10:00:00 GMT';

describe('conditional requests of the cache (RFC 9111 4.3.1)', () => {
  it('sends the stored ETag as If-None-Match and Last-Modified as If-Modified-Since', () => {
    assert.deepEqual(conditionalHeaders({ etag: 'W/"a"', 'last-modified': LM }), [
      ['if-none-match', 'W/"a"'],
      ['if-modified-since', LM],
    ]);
    assert.deepEqual(conditionalHeaders({ etag: '"a"' }), [['if-none-match', '"a"']]);
    assert.deepEqual(conditionalHeaders({ 'last-modified': 'yesterday' }), [], 'an invalid date is no validator');
    assert.deepEqual(conditionalHeaders({ 'content-type': 'text/plain' }), []);
  });
});

describe('a 304 updates the stored answer (RFC 9111 4.3.4)', () => {
  const stored = {
    'content-type': 'application/json',
    'content-encoding': 'br',
    'content-length': '42',
    etag: 'W/"v1"',
    'cache-control': 'max-age=1',
    'x-old': 'kept',
  };

  it('stands for the stored answer only with the same validator', () => {
    assert.equal(notModifiedMatches(stored, { etag: '"v1"' }), true, 'weak comparison');
    assert.equal(notModifiedMatches(stored, { etag: '"v2"' }), false);
    assert.equal(notModifiedMatches({ 'last-modified': LM }, { etag: '"v1"' }), false);
    assert.equal(notModifiedMatches({ 'last-modified': LM }, { 'last-modified': LM }), true);
    assert.equal(
      notModifiedMatches({ 'last-modified': LM }, { 'last-modified': 'Tue, 03 Nov 2026 10:00:00 GMT' }),
      false,
    );
    assert.equal(notModifiedMatches(stored, { 'cache-control': 'max-age=5' }), true, 'no validator in the 304');
  });

  it("replaces the stored fields by the 304's, except framing, length and coding", () => {
    const head = updatedHead(stored, {
      'cache-control': 'max-age=60',
      etag: '"v1"',
      'content-length': '0',
      'content-encoding': 'identity',
      'x-new': 'added',
    });
    assert.equal(head['cache-control'], 'max-age=60');
    assert.equal(head['x-new'], 'added');
    assert.equal(head['x-old'], 'kept');
    assert.equal(head['content-length'], '42');
    assert.equal(head['content-encoding'], 'br');
    assert.equal(head.etag, 'W/"v1"', 'the weak tag of the compressed variant stays weak');
  });
});

describe('stale-while-revalidate (RFC 5861 3)', () => {
  const none = requestLimits({});
  const d = (cc: string) => parseCacheControl(cc);

  it("takes the answer's directive, else the route's window", () => {
    assert.equal(staleWhileRevalidateSec(d('max-age=1, stale-while-revalidate=30'), 5), 30);
    assert.equal(staleWhileRevalidateSec(d('max-age=1'), 5), 5);
    assert.equal(staleWhileRevalidateSec(d('max-age=1'), 0), 0);
  });

  it('serves stale only inside the window and when nothing requires validation first', () => {
    assert.equal(mayServeWhileRevalidating(none, d('max-age=10'), 15, 10, 30), true);
    assert.equal(mayServeWhileRevalidating(none, d('max-age=10'), 41, 10, 30), false, 'past the window');
    assert.equal(mayServeWhileRevalidating(none, d('max-age=10'), 15, 10, 0), false, 'no window');
    for (const cc of ['no-cache', 'must-revalidate', 'proxy-revalidate', 's-maxage=10'])
      assert.equal(mayServeWhileRevalidating(none, d(cc), 15, 10, 30), false, cc);
    for (const cc of ['no-cache', 'max-age=0', 'min-fresh=1'])
      assert.equal(
        mayServeWhileRevalidating(requestLimits({ 'cache-control': cc }), d('max-age=10'), 15, 10, 30),
        false,
        `request ${cc}`,
      );
    assert.equal(mayServeWhileRevalidating(none, d(''), 5, undefined, 30), true, 'stored stale at once');
  });
});
