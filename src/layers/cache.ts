/**
 * The shared HTTP cache on a GET route with `cache:` (docs/caching.md, RFC 9111). It runs after
 * the route's CORS, rate limit, auth and authorization layers, so a cached answer is only ever
 * served to a request the gateway let through; and before the circuit and the backend call.
 *
 * A hit is answered from the store (cache/hit.ts). A miss goes to the backend while its answer is
 * recorded as it leaves (cache/recorder.ts, beneath compression, so the store keeps the encoded
 * variant and a hit costs no compression work), and is stored once complete if RFC 9111 allows
 * it (cache/storable.ts). Concurrent misses for one key wait for the first (request collapsing).
 * With a stale-if-error window, a backend failure or 5xx is answered with the stale entry.
 * With the shared level (`config.cache.redis`), a local miss asks Redis before the backend, and
 * what is stored goes to Redis too (cache/redis-store.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { CacheConfig } from '../config/schema.js';
import type { RouteCacheSpec } from '../config/schema/cache.js';
import type { Exchange, Layer, Step } from '../pipeline/types.js';
import type { EventBus } from '../observability/events.js';
import type { ChooseEncoding } from '../response/compression/accept-encoding.js';
import { interceptBeneath } from '../response/compression/compress-response.js';
import { sendError } from '../response/send-error.js';
import { currentAge, freshnessLifetime, responseTimes } from '../cache/freshness.js';
import { seconds } from '../cache/cache-control.js';
import { mayServe, requestLimits, text, whyNotStorable, type RequestLimits } from '../cache/storable.js';
import type { CacheEntry, CacheStore } from '../cache/store.js';
import { compileIdentity, primaryKey, secondaryKey, varyNames } from '../cache/keys.js';
import { sendStored } from '../cache/hit.js';
import { createRecorder, type RecordedAnswer } from '../cache/recorder.js';
import type { SharedCacheStore } from '../cache/redis-store.js';

export interface CacheLayerOptions {
  readonly store: CacheStore;
  readonly settings: CacheConfig;
  /** The route's coding choice when it compresses; undefined: answers are stored as sent. */
  readonly chooseEncoding: ChooseEncoding | undefined;
  readonly events: EventBus;
  readonly routeId: string;
  /** The shared level and the largest answer written to it; undefined: memory only. */
  readonly shared?: { readonly store: SharedCacheStore; readonly maxEntryBytes: number } | undefined;
  readonly now?: () => number;
}

/** Methods that never change what the cache holds (RFC 9110 9.2.1). */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export function cacheLayer(spec: RouteCacheSpec, options: CacheLayerOptions): Layer {
  const cache = new RouteCache(spec, options);
  return (next) => (ex) => cache.serve(ex, next);
}

/** One request's place in the cache: its keys and what it accepts. */
interface Lookup {
  readonly primary: string;
  readonly identity: string;
  readonly coding: string;
  readonly limits: RequestLimits;
}

/** A route's cache: its settings compiled, its misses in flight. */
class RouteCache {
  private readonly now: () => number;
  private readonly identityOf: (ex: Exchange) => string;
  /** Misses in flight by collapse key: later ones wait for the first. */
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly spec: RouteCacheSpec,
    private readonly options: CacheLayerOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.identityOf = compileIdentity(spec.keyBy);
  }

  async serve(ex: Exchange, next: Step): Promise<void> {
    const { req } = ex;
    const at: Lookup = {
      primary: primaryKey(req),
      identity: this.identityOf(ex),
      coding: this.options.chooseEncoding?.(req.headers['accept-encoding']) ?? 'identity',
      limits: requestLimits(req.headers),
    };
    let entry = this.find(at, req);
    if (entry !== undefined && this.servable(entry, at)) return this.hit(ex, entry, 'Portico; hit');
    if (this.options.shared !== undefined && !at.limits.noCache) {
      const found = await this.fromShared(at, req, entry);
      if (found !== undefined && this.servable(found, at)) return this.hit(ex, found, 'Portico; hit; detail=shared');
      entry ??= found;
    }
    if (at.limits.onlyIfCached) {
      ex.errorCode = 'GW_CACHE_ONLY_IF_CACHED';
      return sendError(ex.res, 'GW_CACHE_ONLY_IF_CACHED', { 'cache-status': 'Portico; fwd=miss' });
    }
    const collapseKey = `${at.primary}\u0000${at.identity}\u0000${at.coding}`;
    const leader = this.inFlight.get(collapseKey);
    if (leader !== undefined && !at.limits.noCache && req.method === 'GET') {
      await leader;
      entry = this.find(at, req);
      if (entry !== undefined && this.servable(entry, at)) return this.hit(ex, entry, 'Portico; hit; detail=collapsed');
    }
    this.lead(ex, collapseKey);
    this.options.events.emit('cache:lookup', { routeId: this.options.routeId, result: entry ? 'stale' : 'miss' });
    this.record(ex, at, entry);
    return next(ex);
  }

  private find(at: Lookup, req: IncomingMessage): CacheEntry | undefined {
    const vary = this.options.store.varyOf(at.primary);
    return vary === undefined
      ? undefined
      : this.options.store.get(at.primary, secondaryKey(at.identity, vary, req, at.coding));
  }

  /**
   * The shared level's variant for this request, kept in memory too when it is newer than `local`.
   * The Vary names guessed are the ones stored here, else those a compressing route's answers carry.
   */
  private async fromShared(at: Lookup, req: IncomingMessage, local: CacheEntry | undefined) {
    const guess = this.options.store.varyOf(at.primary) ?? (this.options.chooseEncoding ? ['accept-encoding'] : []);
    const found = await this.options.shared!.store.find(at.primary, guess, (vary) =>
      secondaryKey(at.identity, vary, req, at.coding),
    );
    if (found === undefined) return undefined;
    if (local === undefined || found.entry.times.responseTime > local.times.responseTime)
      this.options.store.set(at.primary, found.vary, found.secondary, found.entry, this.options.routeId);
    return found.entry;
  }

  private servable(entry: CacheEntry, at: Lookup): boolean {
    return mayServe(at.limits, entry.times.directives, currentAge(entry.times, this.now()), entry.lifetimeSec);
  }

  private hit(ex: Exchange, entry: CacheEntry, cacheStatus: string): void {
    this.options.events.emit('cache:lookup', { routeId: this.options.routeId, result: 'hit' });
    sendStored(ex.req, ex.res, entry, currentAge(entry.times, this.now()), cacheStatus);
  }

  /** Makes this request the one later misses of its key wait for, until its answer closes. */
  private lead(ex: Exchange, collapseKey: string): void {
    if (ex.req.method !== 'GET' || this.inFlight.has(collapseKey)) return;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    this.inFlight.set(collapseKey, finished);
    ex.res.once('close', () => {
      this.inFlight.delete(collapseKey);
      done();
    });
  }

  /** Records the answer as it leaves, to store it once complete. */
  private record(ex: Exchange, at: Lookup, stale: CacheEntry | undefined): void {
    const { req, res } = ex;
    const requestTime = this.now();
    interceptBeneath(res, (raw) =>
      createRecorder(raw, res, {
        maxBytes: this.options.settings.maxEntryBytes,
        cacheStatus: `Portico; fwd=${stale === undefined ? 'uri-miss' : 'stale'}`,
        stale: stale === undefined ? undefined : () => this.staleIfError(stale),
        isHead: req.method === 'HEAD',
        onStaleServed: () =>
          this.options.events.emit('cache:lookup', { routeId: this.options.routeId, result: 'stale' }),
        onComplete: (answer) => this.store(req, at, answer, requestTime),
      }),
    );
  }

  /** The stale entry with its age when it may stand in for an error now (RFC 5861 4). */
  private staleIfError(entry: CacheEntry): { entry: CacheEntry; ageSec: number } | undefined {
    const d = entry.times.directives;
    if (d.has('must-revalidate') || d.has('proxy-revalidate') || d.has('s-maxage') || d.has('no-cache'))
      return undefined;
    const ageSec = currentAge(entry.times, this.now());
    return ageSec - (entry.lifetimeSec ?? 0) <= entry.staleIfErrorSec ? { entry, ageSec } : undefined;
  }

  /** Stores a complete answer when RFC 9111 and the route allow it. */
  private store(req: IncomingMessage, at: Lookup, answer: RecordedAnswer, requestTime: number): void {
    const { status, headers, sent, body } = answer;
    // The head as sent: the stored one leaves out the Age received, which counts here.
    const times = responseTimes(
      sent as Record<string, string | string[] | number | undefined>,
      requestTime,
      this.now(),
    );
    const lifetimeSec = freshnessLifetime(times, status, {
      heuristic: this.options.settings.heuristic,
      defaultTtlSec: this.spec.ttlSec,
    });
    const why = whyNotStorable(
      { headers: req.headers, keyedByIdentity: this.spec.keyBy.length > 0 },
      status,
      sent as Record<string, string | string[] | number | undefined>,
      lifetimeSec !== undefined,
    );
    if (why !== undefined) return;
    // With compression, the coding of what was recorded must be the one this key stands for.
    // Without, the answer is kept as the backend coded it, as any cache keeps it.
    const encoding = text(headers['content-encoding'])?.trim().toLowerCase() || 'identity';
    if (this.options.chooseEncoding !== undefined && encoding !== at.coding) return;
    const vary = varyNames(headers.vary);
    const staleIfErrorSec = seconds(times.directives, 'stale-if-error') ?? this.spec.staleIfErrorSec;
    const secondary = secondaryKey(at.identity, vary, req, at.coding);
    const entry: CacheEntry = { status, headers, body, times, lifetimeSec, staleIfErrorSec };
    const { routeId, shared } = this.options;
    this.options.store.set(at.primary, vary, secondary, entry, routeId);
    if (shared === undefined || body.length > shared.maxEntryBytes) return;
    // Redis keeps it as long as it may be served: its freshness left plus its stale window.
    const ttlSec = (lifetimeSec ?? 0) + staleIfErrorSec - currentAge(times, this.now());
    if (ttlSec > 0) shared.store.write(at.primary, vary, secondary, entry, ttlSec * 1000, routeId);
  }
}

/** What an unsafe request to a URI does to the cache (RFC 9111 4.4): its entries go once it succeeded. */
export function invalidationLayer(store: CacheStore, shared: SharedCacheStore | undefined): Layer {
  const forget = (primary: string) => {
    store.delete(primary);
    shared?.delete(primary);
  };
  return (next) => (ex) => {
    const { req, res } = ex;
    res.once('finish', () => {
      if (res.statusCode >= 400) return;
      const primary = primaryKey(req);
      forget(primary);
      const host = primary.slice(0, primary.indexOf('\u0000'));
      for (const name of ['location', 'content-location']) {
        const target = sameHostPath(host, text(res.getHeader(name) as string | string[] | undefined));
        if (target !== undefined) forget(`${host}\u0000${target}`);
      }
    });
    return next(ex);
  };
}

/** A Location / Content-Location on the request's own host, as a path (RFC 9111 4.4: same origin only). */
function sameHostPath(host: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    const url = new URL(value, `http://${host || 'localhost'}`);
    return url.host.toLowerCase() === host ? url.pathname + url.search : undefined;
  } catch {
    return undefined;
  }
}
