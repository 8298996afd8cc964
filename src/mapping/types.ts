/**
 * What the mapping modules share without importing each other: the options a route's JSON shaping
 * is built from (the endpoint, the shaper and the mapping calls all read them), and the contract of
 * the mapping cache (cache.ts). Types only, so any module can import it.
 */
import type { JsonOutcome, UpstreamSource } from '../upstream/types.js';
import type { MappingCacheConfig } from '../config/schema.js';
import type { EventBus, Logger } from '../observability/types.js';

/** What shaping a JSON answer needs besides the route (mapping calls, cache, limits). */
export interface JsonShapingOptions {
  readonly events: EventBus;
  readonly upstreams: UpstreamSource;
  /** `timeouts.mappingSec` in milliseconds, per mapping call. */
  readonly mappingTimeoutMs: number;
  /** `limits.maxMappingBodyBytes`: larger primary bodies are relayed unchanged. */
  readonly maxBodyBytes: number;
  /** The process-wide cache, or undefined when `mappingCache.enabled` is false. */
  readonly cache: MappingCache | undefined;
  /** `telemetry.propagation`: mapping calls carry the request's `traceparent`/`tracestate`. */
  readonly propagateTrace: boolean;
  /** `limits.connectionsPerOrigin`: mapping calls of one response in flight at once, per origin. */
  readonly connectionsPerOrigin: number;
  /** For what is not an event of its own: enrichment given up (limits, errors). */
  readonly logger: Logger;
}

/** A mapping call's outcome, as the cache keeps it. */
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
