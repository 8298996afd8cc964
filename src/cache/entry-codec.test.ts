import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeEntry, encodeEntry } from './entry-codec.js';
import { responseTimes } from './freshness.js';
import type { CacheEntry } from './store.js';

const T0 = Date.parse('Mon, 02 Nov 2026 10:00:00 GMT');

function entry(body: Buffer): CacheEntry {
  const headers = {
    'content-type': 'application/octet-stream',
    'cache-control': 'max-age=60, stale-if-error=30',
    vary: 'accept-encoding',
  };
  return {
    status: 203,
    headers,
    body,
    times: responseTimes(headers, T0 - 5, T0),
    lifetimeSec: 60,
    staleIfErrorSec: 30,
  };
}

describe('a stored answer as bytes for Redis', () => {
  it('keeps the status, head, timing and every byte of the body, and parses Cache-Control again', () => {
    const body = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80, 10, 13]);
    const original = entry(body);
    const decoded = decodeEntry(encodeEntry(original, T0 + 90_000), T0 + 1_000);
    assert.ok(decoded !== undefined);
    assert.equal(decoded.status, 203);
    assert.deepEqual(decoded.headers, original.headers);
    assert.ok(decoded.body.equals(body));
    assert.equal(decoded.lifetimeSec, 60);
    assert.equal(decoded.staleIfErrorSec, 30);
    const { directives, ...timing } = decoded.times;
    const { directives: _d, ...originalTiming } = original.times;
    for (const [name, value] of Object.entries(originalTiming))
      assert.equal(timing[name as keyof typeof timing], value, name);
    assert.equal(directives.get('max-age'), '60');
    assert.equal(directives.get('stale-if-error'), '30');
  });

  it('reads the directives it was stored under again: CDN-Cache-Control when valid', () => {
    const headers = { 'cache-control': 'no-store', 'cdn-cache-control': 'max-age=600' };
    const stored = { ...entry(Buffer.from('x')), headers, times: responseTimes(headers, T0, T0) };
    const decoded = decodeEntry(encodeEntry(stored, T0 + 90_000), T0);
    assert.equal(decoded?.times.directives.get('max-age'), '600');
    assert.equal(decoded?.times.directives.has('no-store'), false);
  });

  it('is absent past its end, and when the bytes are not an entry of this layout', () => {
    const bytes = encodeEntry(entry(Buffer.from('x')), T0 + 90_000);
    assert.equal(decodeEntry(bytes, T0 + 90_000), undefined);
    assert.equal(decodeEntry(Buffer.from('no'), T0), undefined);
    assert.equal(decodeEntry(Buffer.from([0, 0, 0, 200, 1, 2]), T0), undefined);
    const other = Buffer.from(
      JSON.stringify({ v: 99, until: T0 + 1000, status: 200, headers: {}, times: { responseTime: T0 } }),
    );
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(other.length, 0);
    assert.equal(decodeEntry(Buffer.concat([prefix, other]), T0), undefined);
  });
});
