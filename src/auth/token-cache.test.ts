/** The verified-token cache on its own, with an injected clock (no sleeps). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTokenCache, TOKEN_CACHE_MAX_TTL_MS, type AuthSuccess } from './token-cache.js';

const T0 = 1_700_000_000_000;
const ok = (sub: string): AuthSuccess => ({ ok: true, claimHeaders: [['X-sub', sub]] });

function setup(clockToleranceSec = 0, bounds: { maxEntries?: number } = {}) {
  const clock = { ms: T0 };
  const cache = createTokenCache({ clockToleranceSec, now: () => clock.ms, ...bounds });
  return { cache, clock };
}

describe('token cache', () => {
  it('returns the stored outcome itself for the exact token only', () => {
    const { cache } = setup();
    const outcome = ok('u1');
    cache.set('tok-a', { sub: 'u1' }, outcome);
    assert.equal(cache.get('tok-a'), outcome);
    assert.equal(cache.get('tok-a '), undefined);
    assert.equal(cache.get('tok-b'), undefined);
  });

  for (const tolerance of [0, 30]) {
    it(`tolerance ${tolerance} s: a hit is refused from exp + tolerance on, as jose refuses (exp <= now - tolerance)`, () => {
      const { cache, clock } = setup(tolerance);
      const exp = T0 / 1000 + 60;
      cache.set('t', { exp }, ok('u1'));
      clock.ms = (exp + tolerance) * 1000 - 1;
      assert.deepEqual(cache.get('t'), ok('u1'));
      clock.ms = (exp + tolerance) * 1000;
      assert.equal(cache.get('t'), undefined);
      assert.equal(cache.size, 0, 'the expired entry is dropped');
    });
  }

  it('nbf is checked again on a hit (a clock that steps back)', () => {
    const { cache, clock } = setup(5);
    cache.set('t', { nbf: T0 / 1000 }, ok('u1'));
    clock.ms = T0 - 5_000;
    assert.deepEqual(cache.get('t'), ok('u1'), 'within the tolerance');
    clock.ms = T0 - 6_000;
    assert.equal(cache.get('t'), undefined);
  });

  it(`a token without exp is kept ${TOKEN_CACHE_MAX_TTL_MS / 1000} s at most; a far exp does not extend that`, () => {
    const { cache, clock } = setup();
    cache.set('no-exp', {}, ok('a'));
    cache.set('far-exp', { exp: T0 / 1000 + 86_400 }, ok('b'));
    clock.ms = T0 + TOKEN_CACHE_MAX_TTL_MS;
    assert.ok(cache.get('no-exp'));
    assert.ok(cache.get('far-exp'));
    clock.ms = T0 + TOKEN_CACHE_MAX_TTL_MS + 1;
    assert.equal(cache.get('no-exp'), undefined);
    assert.equal(cache.get('far-exp'), undefined);
  });

  it('a token valid for less than a millisecond more is not stored (lru-cache reads ttl 0 as "forever")', () => {
    const { cache } = setup(0);
    cache.set('t', { exp: T0 / 1000 }, ok('u1'));
    assert.equal(cache.size, 0);
  });

  it('bounded: the least recently used token goes first; clear empties it', () => {
    const { cache } = setup(0, { maxEntries: 2 });
    cache.set('a', {}, ok('a'));
    cache.set('b', {}, ok('b'));
    assert.ok(cache.get('a'));
    cache.set('c', {}, ok('c'));
    assert.equal(cache.size, 2);
    assert.ok(cache.get('a'));
    assert.equal(cache.get('b'), undefined);
    cache.clear();
    assert.equal(cache.size, 0);
  });

  it('claimsBytes counts against the byte bound: large introspection answers push older entries out', () => {
    const cache = createTokenCache({ clockToleranceSec: 0, now: () => T0, maxBytes: 10_000 });
    cache.set('a', {}, ok('u1'), 3_000);
    assert.equal(cache.size, 1);
    cache.set('b', {}, ok('u2'), 3_000);
    assert.equal(cache.size, 1, 'two answers of 3,000 bytes (about 6,000 in memory each) do not fit in 10,000');
    assert.equal(cache.get('a'), undefined);
    assert.ok(cache.get('b'));
  });
});
