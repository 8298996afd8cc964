import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createMappingCache } from './cache.js';
import { type MappingOutcome } from './types.js';
import { heldCall } from '../../test/support/held-call.js';

/** A cache on a hand-driven clock (never 0: lru-cache reads a start of 0 as "no TTL"). */
function setup(settings: { ttlSec?: number; maxSize?: number } = {}) {
  const clock = { t: 1_000 };
  const cache = createMappingCache(
    { enabled: true, ttlSec: settings.ttlSec ?? 60, maxSize: settings.maxSize ?? 1000, store: 'local' },
    { now: () => clock.t },
  );
  const calls: string[] = [];
  const load = async (url: string, outcome: MappingOutcome = { ok: true, json: `"${url}"` }) =>
    cache.load(url, async () => {
      calls.push(url);
      return outcome;
    });
  return { clock, cache, calls, load };
}

describe('createMappingCache', () => {
  it('serves a stored result until ttlSec has passed', async () => {
    const { clock, cache, calls, load } = setup({ ttlSec: 60 });
    assert.deepEqual(await load('A'), { ok: true, json: '"A"' });
    clock.t += 60_000;
    assert.deepEqual(await load('A'), { ok: true, json: '"A"' });
    assert.deepEqual(calls, ['A']);
    clock.t += 1;
    await load('A');
    assert.deepEqual(calls, ['A', 'A']);
    assert.deepEqual(cache.stats(), {
      hits: 1,
      misses: 2,
      sharedHits: 0,
      coalesced: 0,
      evictions: 0,
      expirations: 1,
      size: 1,
    });
  });

  it('the TTL runs from the fetch, not from the last read', async () => {
    const { clock, calls, load } = setup({ ttlSec: 10 });
    await load('A');
    clock.t += 9_000;
    await load('A');
    clock.t += 2_000;
    await load('A');
    assert.deepEqual(calls, ['A', 'A']);
  });

  it('evicts the least recently used entry, not the first inserted', async () => {
    const { cache, calls, load } = setup({ maxSize: 2 });
    await load('A');
    await load('B');
    await load('A'); // A is now the most recently used
    await load('C'); // evicts B; FIFO would evict A
    await load('A');
    assert.deepEqual(calls, ['A', 'B', 'C']);
    await load('B');
    assert.deepEqual(calls, ['A', 'B', 'C', 'B']);
    assert.deepEqual(cache.stats(), {
      hits: 2,
      misses: 4,
      sharedHits: 0,
      coalesced: 0,
      evictions: 2,
      expirations: 0,
      size: 2,
    });
  });

  it('does not store failures', async () => {
    const { cache, calls, load } = setup();
    assert.deepEqual(await load('F', { ok: false, reason: 'status 500' }), { ok: false, reason: 'status 500' });
    await load('F');
    await load('F');
    assert.deepEqual(calls, ['F', 'F']);
    assert.equal(cache.stats().size, 1);
  });

  it('concurrent loads of one URL share one call, successful or not', async () => {
    const { cache } = setup();
    const held = heldCall<MappingOutcome>();
    const a = cache.load('S', held.call);
    const b = cache.load('S', held.call);
    held.settle({ ok: false, reason: 'timeout' });
    assert.deepEqual(await Promise.all([a, b]), [
      { ok: false, reason: 'timeout' },
      { ok: false, reason: 'timeout' },
    ]);
    assert.equal(held.calls(), 1);
    const c = cache.load('S', held.call);
    held.settle({ ok: true, json: '1' });
    assert.deepEqual(await c, { ok: true, json: '1' });
    assert.equal(held.calls(), 2);
    assert.deepEqual(cache.stats(), {
      hits: 0,
      misses: 2,
      sharedHits: 0,
      coalesced: 1,
      evictions: 0,
      expirations: 0,
      size: 1,
    });
  });

  it('a reload with a new shape keeps entries, their order and their remaining lifetime', async () => {
    const { clock, cache, calls, load } = setup({ ttlSec: 60, maxSize: 3 });
    await load('A');
    clock.t += 30_000;
    await load('B');
    await load('A'); // order, least recent first: B, A
    cache.configure({ enabled: true, ttlSec: 60, maxSize: 2, store: 'local' });
    await load('C'); // evicts B
    assert.deepEqual(calls, ['A', 'B', 'C']);
    await load('A');
    assert.deepEqual(calls, ['A', 'B', 'C']);
    clock.t += 30_001; // A was fetched 60.001 s ago
    await load('A');
    assert.deepEqual(calls, ['A', 'B', 'C', 'A']);
  });

  it('a shorter TTL on reload applies to the entries already held', async () => {
    const { clock, cache, calls, load } = setup({ ttlSec: 60 });
    await load('A');
    cache.configure({ enabled: true, ttlSec: 5, maxSize: 1000, store: 'local' });
    clock.t += 5_001;
    await load('A');
    assert.deepEqual(calls, ['A', 'A']);
  });

  it('disabling drops the entries; counters stay', async () => {
    const { cache, load } = setup();
    await load('A');
    cache.configure({ enabled: false, ttlSec: 60, maxSize: 1000, store: 'local' });
    assert.deepEqual(cache.stats(), {
      hits: 0,
      misses: 1,
      sharedHits: 0,
      coalesced: 0,
      evictions: 0,
      expirations: 0,
      size: 0,
    });
  });
});
