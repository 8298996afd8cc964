/**
 * The mapping cache (docs/design-decisions.md "Response mapping"): successful mapping results
 * by URL, for `ttlSec`, at most `maxSize` entries, least recently used evicted first.
 *
 * Design note: storage is lru-cache (a true LRU: a read moves the entry to the front, unlike a
 * Map in insertion order) with a per-entry TTL measured from the fetch. Only successes are
 * stored; concurrent requests for one URL share one call through single-flight.ts, whose map is
 * per process like this cache. The cache is made once per process (gateway.ts) and survives
 * reloads; a reload that changes `ttlSec` or `maxSize` moves the live entries into a cache of the
 * new shape, keeping their order and remaining lifetime.
 *
 * With `store: redis` a second level sits under the LRU (redis-cache.ts): a local miss asks Redis
 * before calling the service, inside the single flight (concurrent misses still make one lookup),
 * and a successful call is written to both. An entry found in Redis lives locally only for what is
 * left of its Redis lifetime, so every replica forgets it at the same moment.
 */
import { LRUCache } from 'lru-cache';
import type { MappingCacheConfig } from '../config/schema.js';
import { createSingleFlight } from './single-flight.js';
import type { MappingCache, MappingCacheStats, MappingOutcome } from './types.js';

/** A second level shared by replicas (redis-cache.ts); it never rejects and never throws. */
export interface SharedMappingStore {
  /** The JSON text kept for `url` and the milliseconds it has left, or undefined (absent, or no answer). */
  get(url: string): Promise<{ readonly json: string; readonly ttlMs: number } | undefined>;
  /** Keeps `json` for `ttlMs` (sent in the background). */
  set(url: string, json: string, ttlMs: number): void;
}

export interface MappingCacheOptions {
  /** Milliseconds clock for TTLs (tests advance it by hand); must never return 0. */
  readonly now?: () => number;
  /** The second level used while `store` is `redis`. */
  readonly shared?: SharedMappingStore | undefined;
}

/** Creates the process-wide mapping cache. */
export function createMappingCache(settings: MappingCacheConfig, options: MappingCacheOptions = {}): MappingCache {
  const perf = options.now === undefined ? undefined : { now: options.now };
  const counts = { hits: 0, misses: 0, sharedHits: 0, coalesced: 0, evictions: 0, expirations: 0 };
  const flight = createSingleFlight<MappingOutcome>();
  const shape = { ttlSec: settings.ttlSec, maxSize: settings.maxSize };
  const c: CacheState = {
    counts,
    perf,
    offered: options.shared,
    shape,
    lru: makeLru(perf, counts, shape.maxSize, shape.ttlSec),
    shared: sharedFor(settings, options.shared),
  };

  return {
    load(url, call) {
      const cached = c.lru.get(url);
      if (cached !== undefined) {
        c.counts.hits++;
        return { ok: true, json: cached };
      }
      const store = c.shared;
      const { promise, joined } = flight.run(url, () =>
        store === undefined ? callAndStore(c, url, call) : fromShared(c, store, url, call),
      );
      if (joined) c.counts.coalesced++;
      return promise;
    },
    lookup(urls) {
      return lookup(c, urls);
    },
    store(url, json) {
      c.lru.set(url, json);
      c.shared?.set(url, json, c.shape.ttlSec * 1000);
    },
    configure(next) {
      configure(c, next);
    },
    stats: () => ({ ...c.counts, size: c.lru.size }),
    clear: () => c.lru.clear(),
  };
}

/** The counters of `stats()`, less the size. */
type Counts = { -readonly [K in Exclude<keyof MappingCacheStats, 'size'>]: number };

/** One cache's state, shared by the functions below; configure() replaces `lru` when the shape changes. */
interface CacheState {
  readonly counts: Counts;
  /** lru-cache's clock, when the options give one. */
  readonly perf: { readonly now: () => number } | undefined;
  /** The second level given in the options, used while `store` is `redis`. */
  readonly offered: SharedMappingStore | undefined;
  shape: { readonly ttlSec: number; readonly maxSize: number };
  lru: LRUCache<string, string>;
  shared: SharedMappingStore | undefined;
}

function sharedFor(s: MappingCacheConfig, offered: SharedMappingStore | undefined): SharedMappingStore | undefined {
  return s.store === 'redis' ? offered : undefined;
}

function makeLru(perf: CacheState['perf'], counts: Counts, max: number, ttlSec: number): LRUCache<string, string> {
  return new LRUCache<string, string>({
    max,
    ttl: ttlSec * 1000,
    // lru-cache would otherwise reuse one clock reading for a while and arm a timer per read.
    ttlResolution: 0,
    updateAgeOnGet: false,
    ...(perf === undefined ? {} : { perf }),
    dispose: (_value, _key, reason) => {
      if (reason === 'evict') counts.evictions++;
      else if (reason === 'expire') counts.expirations++;
    },
  });
}

async function callAndStore(c: CacheState, url: string, call: () => Promise<MappingOutcome>): Promise<MappingOutcome> {
  c.counts.misses++;
  const outcome = await call();
  if (outcome.ok) {
    c.lru.set(url, outcome.json);
    c.shared?.set(url, outcome.json, c.shape.ttlSec * 1000);
  }
  return outcome;
}

async function fromShared(
  c: CacheState,
  store: SharedMappingStore,
  url: string,
  call: () => Promise<MappingOutcome>,
): Promise<MappingOutcome> {
  const found = await store.get(url);
  if (found === undefined) return callAndStore(c, url, call);
  c.counts.sharedHits++;
  c.lru.set(url, found.json, { ttl: Math.min(found.ttlMs, c.shape.ttlSec * 1000) });
  return { ok: true, json: found.json };
}

async function lookup(c: CacheState, urls: readonly string[]): Promise<(string | undefined)[]> {
  const found: (string | undefined)[] = urls.map((url) => c.lru.get(url));
  for (const json of found) if (json !== undefined) c.counts.hits++;
  const store = c.shared;
  if (store !== undefined) {
    const missing = urls.flatMap((url, i) => (found[i] === undefined ? [i] : []));
    const remote = await Promise.all(missing.map((i) => store.get(urls[i]!)));
    missing.forEach((i, k) => {
      const entry = remote[k];
      if (entry === undefined) return;
      c.counts.sharedHits++;
      c.lru.set(urls[i]!, entry.json, { ttl: Math.min(entry.ttlMs, c.shape.ttlSec * 1000) });
      found[i] = entry.json;
    });
  }
  for (const json of found) if (json === undefined) c.counts.misses++;
  return found;
}

function configure(c: CacheState, next: MappingCacheConfig): void {
  c.shared = sharedFor(next, c.offered);
  if (!next.enabled) {
    c.lru.clear();
    return;
  }
  if (next.ttlSec === c.shape.ttlSec && next.maxSize === c.shape.maxSize) return;
  const old = c.lru;
  c.shape = { ttlSec: next.ttlSec, maxSize: next.maxSize };
  c.lru = makeLru(c.perf, c.counts, c.shape.maxSize, c.shape.ttlSec);
  // Least recently used first, so the order carries over; an entry never outlives the new TTL.
  for (const [url, json] of old.rentries()) {
    if (url === undefined || json === undefined) continue;
    const remaining = Math.min(old.getRemainingTTL(url), c.shape.ttlSec * 1000);
    if (remaining > 0) c.lru.set(url, json, { ttl: remaining });
  }
}
