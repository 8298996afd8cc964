import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCacheControl, parseTargetedCacheControl } from './cache-control.js';
import { currentAge, freshnessLifetime, parseAge, responseTimes } from './freshness.js';
import { mayServe, requestLimits, whyNotStorable } from './storable.js';

const T0 = Date.parse('Mon, 02 Nov 2026 10:00:00 GMT');
const date = (ms: number) => new Date(ms).toUTCString();
const opts = { heuristic: false, defaultTtlSec: undefined };

describe('Cache-Control (RFC 9111 5.2)', () => {
  it('reads names case-insensitively, quoted values, several headers, first value wins', () => {
    const d = parseCacheControl(['Max-Age=60, private="set-cookie, x-a"', 'no-cache, max-age=5']);
    assert.equal(d.get('max-age'), '60');
    assert.equal(d.get('private'), 'set-cookie, x-a');
    assert.equal(d.get('no-cache'), true);
  });
});

describe('CDN-Cache-Control (RFC 9213)', () => {
  it('reads a Structured Fields dictionary; an invalid one is ignored whole, a mistyped value is no number', () => {
    assert.deepEqual(
      [...parseTargetedCacheControl('foobar, max-age=3600;x=1, private')!],
      [
        ['foobar', true],
        ['max-age', '3600'],
        ['private', true],
      ],
    );
    assert.equal(parseTargetedCacheControl('max-age=10000, &&&&&'), undefined);
    assert.equal(parseTargetedCacheControl('MaX-aGe=60'), undefined);
    assert.equal(parseTargetedCacheControl('max-age=60,'), undefined);
    assert.equal(parseTargetedCacheControl(undefined), undefined);
    assert.equal(parseTargetedCacheControl('max-age="10000"')!.get('max-age'), '"10000"');
  });

  it('stands for Cache-Control and Expires when valid', () => {
    const t = (headers: Record<string, string>) => responseTimes(headers, T0, T0);
    const fresh = t({ 'cdn-cache-control': 'max-age=3600', 'cache-control': 'no-store', date: date(T0) });
    assert.equal(freshnessLifetime(fresh, 200, opts), 3600);
    assert.equal(fresh.directives.has('no-store'), false);
    const noExpires = t({ 'cdn-cache-control': 'max-age=0', expires: date(T0 + 10_000_000), date: date(T0) });
    assert.equal(freshnessLifetime(noExpires, 200, opts), 0);
    const invalid = t({ 'cdn-cache-control': 'max-age=10000, &&&&&', 'cache-control': 'max-age=5' });
    assert.equal(freshnessLifetime(invalid, 200, opts), 5);
    const plain = { headers: {}, keyedByIdentity: false };
    const cc = { 'cache-control': 'max-age=60' };
    assert.equal(whyNotStorable(plain, 200, { ...cc, 'cdn-cache-control': 'no-store' }, true), 'no-store');
    assert.equal(
      whyNotStorable(plain, 200, { 'cache-control': 'no-store', 'cdn-cache-control': 'max-age=9' }, true),
      undefined,
    );
  });
});

describe('freshness lifetime and age (RFC 9111 4.2)', () => {
  it('s-maxage, then max-age, then Expires - Date, then the heuristic or the default', () => {
    const t = (headers: Record<string, string>) => responseTimes(headers, T0, T0);
    assert.equal(freshnessLifetime(t({ 'cache-control': 's-maxage=10, max-age=99' }), 200, opts), 10);
    assert.equal(freshnessLifetime(t({ 'cache-control': 'max-age=99' }), 200, opts), 99);
    assert.equal(freshnessLifetime(t({ 'cache-control': 'max-age=abc' }), 200, opts), 0);
    assert.equal(freshnessLifetime(t({ date: date(T0), expires: date(T0 + 30_000) }), 200, opts), 30);
    assert.equal(freshnessLifetime(t({ date: date(T0), expires: '0' }), 200, opts), 0);
    const lm = t({ date: date(T0), 'last-modified': date(T0 - 1_000_000) });
    assert.equal(freshnessLifetime(lm, 200, opts), undefined);
    assert.equal(freshnessLifetime(lm, 200, { heuristic: true, defaultTtlSec: undefined }), 100);
    assert.equal(freshnessLifetime(lm, 500, { heuristic: true, defaultTtlSec: 5 }), undefined);
    assert.equal(freshnessLifetime(t({}), 200, { heuristic: false, defaultTtlSec: 5 }), 5);
  });

  it('age counts the Age received, the response delay and the time resident', () => {
    const t = responseTimes({ date: date(T0), age: '10' }, T0, T0 + 2_000);
    assert.equal(currentAge(t, T0 + 2_000), 12);
    assert.equal(currentAge(t, T0 + 7_000), 17);
    const late = responseTimes({ date: date(T0 - 60_000) }, T0, T0);
    assert.equal(currentAge(late, T0), 60, 'apparent age from Date');
  });

  it('reads the first Age of a list or of several lines, caps it, ignores one that is not a number', () => {
    assert.equal(parseAge('7200, 0'), 7200);
    assert.equal(parseAge(['7200', '0']), 7200);
    assert.equal(parseAge('0, old'), 0);
    assert.equal(parseAge('2147483649'), 2 ** 31);
    assert.equal(parseAge('old'), 0);
    assert.equal(parseAge('1.5'), 0);
    assert.equal(parseAge(undefined), 0);
    const t = responseTimes({ date: date(T0), 'cache-control': 'max-age=3600', age: ['7200', '0'] }, T0, T0);
    assert.ok(currentAge(t, T0) > 3600, 'stale on arrival');
  });

  it('takes an Expires that is not an HTTP-date as already expired', () => {
    const t = responseTimes({ date: date(T0), expires: 'Thu, 18 Aug 2050 02:01:18 UTC' }, T0, T0);
    assert.equal(freshnessLifetime(t, 200, opts), 0);
  });
});

describe('what a shared cache may store and serve (RFC 9111 3, 4, 5.2.1)', () => {
  const plain = { headers: {}, keyedByIdentity: false };
  it('refuses no-store, private, Set-Cookie, Vary: *, partial and uncacheable answers', () => {
    assert.equal(whyNotStorable(plain, 200, { 'cache-control': 'max-age=60' }, true), undefined);
    assert.equal(whyNotStorable(plain, 200, { 'cache-control': 'no-store' }, true), 'no-store');
    assert.equal(whyNotStorable(plain, 200, { 'cache-control': 'private' }, true), 'private');
    assert.equal(whyNotStorable(plain, 200, { 'set-cookie': 'a=b' }, true), 'set-cookie');
    assert.equal(whyNotStorable(plain, 200, { vary: 'Accept, *' }, true), 'vary-star');
    assert.equal(whyNotStorable(plain, 206, {}, true), 'status');
    assert.equal(whyNotStorable(plain, 302, {}, false), 'no-freshness');
    assert.equal(
      whyNotStorable({ headers: { 'cache-control': 'no-store' }, keyedByIdentity: false }, 200, {}, true),
      'request-no-store',
    );
  });

  it('stores a no-store, must-understand answer only for a status it understands (RFC 9111 5.2.2.3)', () => {
    const cc = { 'cache-control': 'max-age=3600, no-store, must-understand' };
    assert.equal(whyNotStorable(plain, 200, cc, true), undefined);
    assert.equal(whyNotStorable(plain, 599, cc, true), 'must-understand');
    assert.equal(
      whyNotStorable(plain, 599, { 'cache-control': 'max-age=60, must-understand' }, true),
      'must-understand',
    );
  });

  it('shares an answer to a request with credentials only when the answer allows it, or per identity', () => {
    const auth = { headers: { authorization: 'Bearer x' }, keyedByIdentity: false };
    assert.equal(whyNotStorable(auth, 200, { 'cache-control': 'max-age=60' }, true), 'credentials');
    assert.equal(whyNotStorable({ headers: { cookie: 'a=b' }, keyedByIdentity: false }, 200, {}, true), 'credentials');
    for (const cc of ['public', 's-maxage=5', 'must-revalidate, max-age=5'])
      assert.equal(whyNotStorable(auth, 200, { 'cache-control': cc }, true), undefined, cc);
    assert.equal(whyNotStorable({ ...auth, keyedByIdentity: true }, 200, {}, true), undefined);
  });

  it('serves fresh answers; stale ones only as far as the request allows and never past must-revalidate', () => {
    const none = requestLimits({});
    const d = (cc: string) => parseCacheControl(cc);
    assert.equal(mayServe(none, d('max-age=60'), 10, 60), true);
    assert.equal(mayServe(none, d('max-age=60'), 61, 60), false);
    assert.equal(mayServe(none, d('no-cache'), 0, 60), false);
    assert.equal(mayServe(requestLimits({ 'cache-control': 'max-age=5' }), d(''), 10, 60), false);
    assert.equal(mayServe(requestLimits({ 'cache-control': 'min-fresh=55' }), d(''), 10, 60), false);
    assert.equal(mayServe(requestLimits({ 'cache-control': 'max-stale=30' }), d(''), 80, 60), true);
    assert.equal(mayServe(requestLimits({ 'cache-control': 'max-stale' }), d(''), 8000, 60), true);
    assert.equal(mayServe(requestLimits({ 'cache-control': 'max-stale' }), d('must-revalidate'), 80, 60), false);
    assert.equal(mayServe(requestLimits({ 'cache-control': 'max-stale' }), d('s-maxage=60'), 80, 60), false);
    assert.equal(requestLimits({ pragma: 'no-cache' }).noCache, true);
    assert.equal(requestLimits({ pragma: 'no-cache', 'cache-control': 'max-age=5' }).noCache, false);
  });
});
