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
import type { JsonOutcome } from '../upstream/call/json-call.js';

/** The result of one mapping call: the body's JSON text, or why there is none. */
export type MappingOutcome = JsonOutcome;

/** Counters for metrics; they only grow, and survive reloads. */
export interface MappingCacheStats {
  /** Served from the cache. */
  readonly hits: number;
  /** Not cached: a call was made. */
  readonly misses: number;
  /** Not cached here, found in the shared store (`store: redis`): no call was made. */
  readonly sharedHits: number;
  /** Not cached, but a call for the URL was running and was joined. */
  readonly coalesced: number;
  /** Entries dropped to make room (maxSize). */
  readonly evictions: number;
  /** Entries dropped because their TTL ran out. */
  readonly expirations: number;
  /** Entries held now. */
  readonly size: number;
}

export interface MappingCache {
  /**
   * The cached result for `url`, else the running call for it, else the result of `call()`,
   * stored when successful. `call` must resolve (never reject).
   */
  load(url: string, call: () => Promise<MappingOutcome>): MappingOutcome | Promise<MappingOutcome>;
  /**
   * The cached results for `urls` (undefined where there is none), from the local level, then the
   * shared one; counts a hit for each found and a miss for each not (a batched rule asks for those).
   */
  lookup(urls: readonly string[]): Promise<(string | undefined)[]>;
  /** Keeps a result fetched outside `load`: a batch call fills one entry per value it returned. */
  store(url: string, json: string): void;
  /** Applies a (re)loaded `config.mappingCache`; disabling drops the entries. */
  configure(settings: MappingCacheConfig): void;
  stats(): MappingCacheStats;
  clear(): void;
}

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
  let shape = { ttlSec: settings.ttlSec, maxSize: settings.maxSize };
  let lru = makeLru(shape.maxSize, shape.ttlSec);
  let shared = sharedFor(settings);

  function sharedFor(s: MappingCacheConfig): SharedMappingStore | undefined {
    return s.store === 'redis' ? options.shared : undefined;
  }

  async function callAndStore(url: string, call: () => Promise<MappingOutcome>): Promise<MappingOutcome> {
    counts.misses++;
    const outcome = await call();
    if (outcome.ok) {
      lru.set(url, outcome.json);
      shared?.set(url, outcome.json, shape.ttlSec * 1000);
    }
    return outcome;
  }

  async function fromShared(
    store: SharedMappingStore,
    url: string,
    call: () => Promise<MappingOutcome>,
  ): Promise<MappingOutcome> {
    const found = await store.get(url);
    if (found === undefined) return callAndStore(url, call);
    counts.sharedHits++;
    lru.set(url, found.json, { ttl: Math.min(found.ttlMs, shape.ttlSec * 1000) });
    return { ok: true, json: found.json };
  }

  function makeLru(max: number, ttlSec: number): LRUCache<string, string> {
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

  return {
    load(url, call) {
      const cached = lru.get(url);
      if (cached !== undefined) {
        counts.hits++;
        return { ok: true, json: cached };
      }
      const store = shared;
      const { promise, joined } = flight.run(url, () =>
        store === undefined ? callAndStore(url, call) : fromShared(store, url, call),
      );
      if (joined) counts.coalesced++;
      return promise;
    },
    async lookup(urls) {
      const found: (string | undefined)[] = urls.map((url) => lru.get(url));
      for (const json of found) if (json !== undefined) counts.hits++;
      const store = shared;
      if (store !== undefined) {
        const missing = urls.flatMap((url, i) => (found[i] === undefined ? [i] : []));
        const remote = await Promise.all(missing.map((i) => store.get(urls[i]!)));
        missing.forEach((i, k) => {
          const entry = remote[k];
          if (entry === undefined) return;
          counts.sharedHits++;
          lru.set(urls[i]!, entry.json, { ttl: Math.min(entry.ttlMs, shape.ttlSec * 1000) });
          found[i] = entry.json;
        });
      }
      for (const json of found) if (json === undefined) counts.misses++;
      return found;
    },
    store(url, json) {
      lru.set(url, json);
      shared?.set(url, json, shape.ttlSec * 1000);
    },
    configure(next) {
      shared = sharedFor(next);
      if (!next.enabled) {
        lru.clear();
        return;
      }
      if (next.ttlSec === shape.ttlSec && next.maxSize === shape.maxSize) return;
      const old = lru;
      shape = { ttlSec: next.ttlSec, maxSize: next.maxSize };
      lru = makeLru(shape.maxSize, shape.ttlSec);
      // Least recently used first, so the order carries over; an entry never outlives the new TTL.
      for (const [url, json] of old.rentries()) {
        if (url === undefined || json === undefined) continue;
        const remaining = Math.min(old.getRemainingTTL(url), shape.ttlSec * 1000);
        if (remaining > 0) lru.set(url, json, { ttl: remaining });
      }
    },
    stats: () => ({ ...counts, size: lru.size }),
    clear: () => lru.clear(),
  };
}
