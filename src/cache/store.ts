/**
 * The gateway's HTTP cache store: answers by primary key (host and target URI, plus the route's
 * identity key), each with its variants by the request headers its `Vary` names (RFC 9111 4.1),
 * in one LRU bounded by bytes (`cache.maxBytes`). Process-wide, so that it survives reloads like
 * the mapping cache; a route's `cache` settings only decide what goes in and comes out.
 */
import { LRUCache } from 'lru-cache';
import type { ResponseTimes } from './freshness.js';

/** One stored answer. */
export interface CacheEntry {
  readonly status: number;
  /** The head as sent to the client, without per-request and hop-by-hop fields. */
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly body: Buffer;
  readonly times: ResponseTimes;
  /** Seconds; undefined: stale at once (stored only for validators, or by `max-stale`). */
  readonly lifetimeSec: number | undefined;
  /** The route's stale-if-error window in seconds (the answer's own directive, else the route's). */
  readonly staleIfErrorSec: number;
}

/** The answers stored for one primary key: the `Vary` names of the latest, and one entry per variant. */
interface Variants {
  readonly vary: readonly string[];
  /** The route that stored the latest variant (for a purge by route). */
  routeId: string | undefined;
  readonly entries: Map<string, CacheEntry>;
  size: number;
}

export interface CacheStore {
  /** The `Vary` names stored for `primary` (lower case); undefined when nothing is stored. */
  varyOf(primary: string): readonly string[] | undefined;
  get(primary: string, secondary: string): CacheEntry | undefined;
  /** Stores `entry` (of route `routeId`); `vary` replaces the variants of an older `Vary` list. */
  set(primary: string, vary: readonly string[], secondary: string, entry: CacheEntry, routeId?: string): void;
  /** Forgets every variant of `primary`. */
  delete(primary: string): boolean;
  /** Forgets every primary key that starts with `prefix`; the count forgotten. */
  purgePrefix(prefix: string): number;
  /** Forgets the primary keys `drop` names (given the key and the route that stored it); the count of answers forgotten. */
  purge(drop: (primary: string, routeId: string | undefined) => boolean): number;
  /** Forgets everything (a replica that may have missed purges: cache/broadcast.ts); the count of answers forgotten. */
  clear(): number;
  readonly stats: () => { entries: number; bytes: number };
}

export interface CacheStoreOptions {
  readonly maxBytes: number;
}

/** Bytes an entry is counted for: its body and a fair estimate of its head. */
export function entrySize(entry: Pick<CacheEntry, 'body' | 'headers'>): number {
  let size = entry.body.length + 200;
  for (const name in entry.headers) {
    const v = entry.headers[name]!;
    size += name.length + (Array.isArray(v) ? v.join('').length + 8 * v.length : v.length) + 8;
  }
  return size;
}

export function createCacheStore(options: CacheStoreOptions): CacheStore {
  const lru = new LRUCache<string, Variants>({
    maxSize: options.maxBytes,
    sizeCalculation: (v) => Math.max(1, v.size),
  });
  return {
    varyOf: (primary) => lru.peek(primary)?.vary,
    get: (primary, secondary) => lru.get(primary)?.entries.get(secondary),
    set(primary, vary, secondary, entry, routeId) {
      const before = lru.peek(primary);
      const variants: Variants =
        before !== undefined && sameNames(before.vary, vary) ? before : { vary, routeId, entries: new Map(), size: 0 };
      if (routeId !== undefined) variants.routeId = routeId;
      const replaced = variants.entries.get(secondary);
      if (replaced !== undefined) variants.size -= entrySize(replaced);
      variants.entries.set(secondary, entry);
      variants.size += entrySize(entry);
      // Set again so the LRU recounts the key's size (and evicts others if needed).
      lru.set(primary, variants);
    },
    delete: (primary) => lru.delete(primary),
    purgePrefix(prefix) {
      let n = 0;
      for (const key of [...lru.keys()]) if (key.startsWith(prefix) && lru.delete(key)) n++;
      return n;
    },
    purge(drop) {
      let n = 0;
      for (const [key, variants] of [...lru.entries()])
        if (drop(key, variants.routeId) && lru.delete(key)) n += variants.entries.size;
      return n;
    },
    clear() {
      let n = 0;
      for (const variants of lru.values()) n += variants.entries.size;
      lru.clear();
      return n;
    },
    stats: () => ({ entries: [...lru.values()].reduce((n, v) => n + v.entries.size, 0), bytes: lru.calculatedSize }),
  };
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}
