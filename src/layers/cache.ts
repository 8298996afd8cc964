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
 * what is stored goes to Redis too (cache/redis-store.ts). A stale entry is revalidated with its
 * validators, a 304 refreshing it (cache/revalidation.ts); inside its stale-while-revalidate
 * window it is served at once and refreshed in the background.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { CacheConfig, CompressionAlgorithm } from '../config/schema.js';
import type { RouteCacheSpec } from '../config/schema/cache.js';
import type { Exchange, Layer, Step } from '../pipeline/types.js';
import type { EventBus } from '../observability/events.js';
import { interceptBeneath, type CompressionPolicy } from '../response/compression/compress-response.js';
import { sendError } from '../response/send-error.js';
import { currentAge, responseTimes } from '../cache/freshness.js';
import { mayServe, requestLimits, text, whyNotStorable, type RequestLimits } from '../cache/storable.js';
import type { CacheEntry, CacheStore } from '../cache/store.js';
import { compileIdentity, primaryKey, secondaryKey, varyNames } from '../cache/keys.js';
import { sendStored, storedAnswer, type StoredAnswer } from '../cache/hit.js';
import { backgroundExchange } from '../cache/background-exchange.js';
import { conditionalHeaders, forbidsStale, mayServeWhileRevalidating } from '../cache/revalidation.js';
import { staleWhileRevalidateSec } from '../cache/revalidation.js';
import { cacheEntry, revalidatedEntry, type EntryRules } from '../cache/entry.js';
import { createRecorder, type RecordedAnswer } from '../cache/recorder.js';
import type { SharedCacheStore } from '../cache/redis-store.js';

export interface CacheLayerOptions {
  readonly store: CacheStore;
  readonly settings: CacheConfig;
  /** The route's compression when it compresses; undefined: answers are stored as sent. */
  readonly compression: CompressionPolicy | undefined;
  /** A backend 304 can stand for a stored answer: a proxied route's, not one mapped or aggregated. */
  readonly conditional: boolean;
  /** Stale answers may be refreshed in the background: not with plugins (per-request state). */
  readonly background: boolean;
  readonly events: EventBus;
  readonly routeId: string;
  /** The shared level and the largest answer written to it; undefined: memory only. */
  readonly shared?: { readonly store: SharedCacheStore; readonly maxEntryBytes: number } | undefined;
  readonly now?: () => number;
}

export function cacheLayer(spec: RouteCacheSpec, options: CacheLayerOptions): Layer {
  const cache = new RouteCache(spec, options);
  return (next) => (ex) => cache.serve(ex, next);
}

/** One request's place in the cache: its keys and what it accepts. */
interface Lookup {
  readonly primary: string;
  readonly identity: string;
  readonly coding: CompressionAlgorithm | 'identity';
  readonly limits: RequestLimits;
}

/** Requests for one key wait for the one of theirs at the backend under this key. */
const collapseKeyOf = (at: Lookup) => `${at.primary}\u0000${at.identity}\u0000${at.coding}`;

/** A route's cache: its settings compiled, its misses in flight. */
class RouteCache {
  private readonly now: () => number;
  private readonly identityOf: (ex: Exchange) => string;
  private readonly rules: EntryRules;
  /** Misses in flight by collapse key: later ones wait for the first. */
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly spec: RouteCacheSpec,
    private readonly options: CacheLayerOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.identityOf = compileIdentity(spec.keyBy);
    this.rules = {
      heuristic: options.settings.heuristic,
      defaultTtlSec: spec.ttlSec,
      staleIfErrorSec: spec.staleIfErrorSec,
    };
  }

  async serve(ex: Exchange, next: Step): Promise<void> {
    const { req } = ex;
    const at: Lookup = {
      primary: primaryKey(req),
      identity: this.identityOf(ex),
      coding: this.options.compression?.choose(req.headers['accept-encoding']) ?? 'identity',
      limits: requestLimits(req.headers),
    };
    let entry = this.find(at, req);
    if (entry !== undefined && this.servable(entry, at)) return this.hit(ex, entry, 'Portico; hit');
    if (this.options.shared !== undefined && !at.limits.noCache) {
      const found = await this.fromShared(at, req, entry);
      if (found !== undefined && this.servable(found, at)) return this.hit(ex, found, 'Portico; hit; detail=shared');
      entry ??= found;
    }
    if (entry !== undefined && this.options.background && this.whileRevalidating(entry, at)) {
      this.refreshInBackground(ex, at, entry, next);
      return this.hit(ex, entry, 'Portico; hit; fwd=stale', 'stale');
    }
    if (at.limits.onlyIfCached) {
      ex.errorCode = 'GW_CACHE_ONLY_IF_CACHED';
      return sendError(ex.res, 'GW_CACHE_ONLY_IF_CACHED', { 'cache-status': 'Portico; fwd=miss' });
    }
    const collapseKey = collapseKeyOf(at);
    const leader = this.inFlight.get(collapseKey);
    if (leader !== undefined && !at.limits.noCache && req.method === 'GET') {
      await leader;
      entry = this.find(at, req);
      if (entry !== undefined && this.servable(entry, at)) return this.hit(ex, entry, 'Portico; hit; detail=collapsed');
    }
    this.lead(ex, collapseKey);
    this.record(ex, at, entry, true);
    return next(ex);
  }

  /** Inside the stale-while-revalidate window of the answer, else of the route (RFC 5861 3). */
  private whileRevalidating(entry: CacheEntry, at: Lookup): boolean {
    const ageSec = currentAge(entry.times, this.now());
    const windowSec = this.staleWhileRevalidateOf(entry);
    return mayServeWhileRevalidating(at.limits, entry.times.directives, ageSec, entry.lifetimeSec, windowSec);
  }

  private staleWhileRevalidateOf(entry: CacheEntry): number {
    return staleWhileRevalidateSec(entry.times.directives, this.spec.staleWhileRevalidateSec);
  }

  /**
   * Revalidates `stale` with a copy of this request, unless a request for its key is already at
   * the backend: at most one refresh per key at a time. A refresh that fails stores nothing, so
   * the stale entry is served until its window ends.
   */
  private refreshInBackground(ex: Exchange, at: Lookup, stale: CacheEntry, next: Step): void {
    const collapseKey = collapseKeyOf(at);
    if (this.inFlight.has(collapseKey)) return;
    const refresh = backgroundExchange(ex, at.coding, this.options.compression);
    this.inFlight.set(collapseKey, refresh.closed);
    void refresh.closed.then(() => this.inFlight.delete(collapseKey));
    this.record(refresh.ex, at, stale, false);
    // Errors of the refresh are answered onto its discarded response by the pipeline itself.
    void next(refresh.ex).catch(() => refresh.ex.res.destroy());
  }

  private lookup(result: 'hit' | 'stale' | 'miss' | 'revalidated'): void {
    this.options.events.emit('cache:lookup', { routeId: this.options.routeId, result });
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
    const guess = this.options.store.varyOf(at.primary) ?? (this.options.compression ? ['accept-encoding'] : []);
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

  private hit(ex: Exchange, entry: CacheEntry, cacheStatus: string, result: 'hit' | 'stale' = 'hit'): void {
    this.lookup(result);
    sendStored(ex, entry, currentAge(entry.times, this.now()), cacheStatus, this.options.compression === undefined);
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

  /**
   * Records the answer as it leaves, to store it once complete. With a stale entry that has a
   * validator (on a route whose backend answers are stored as they come), the backend call is a
   * conditional one, and its 304 is answered with the entry, refreshed. `foreground`: a client
   * waits for this answer (a background refresh stores no error, and needs no stale-if-error).
   */
  private record(ex: Exchange, at: Lookup, stale: CacheEntry | undefined, foreground: boolean): void {
    const { req, res } = ex;
    const requestTime = this.now();
    const validators = stale !== undefined && this.options.conditional ? conditionalHeaders(stale.headers) : [];
    if (validators.length > 0)
      (ex.upstreamEdits ??= { path: undefined, headers: [], target: undefined }).headers.push(...validators);
    const revalidating = validators.length > 0 ? stale : undefined;
    // A client's request counts once: a miss, a stale entry replaced, or one a 304 revalidated.
    let result: 'miss' | 'stale' | 'revalidated' = stale === undefined ? 'miss' : 'stale';
    if (foreground) res.once('close', () => this.lookup(result));
    interceptBeneath(res, (raw) =>
      createRecorder(raw, res, {
        maxBytes: this.options.settings.maxEntryBytes,
        cacheStatus: `Portico; fwd=${stale === undefined ? 'uri-miss' : 'stale'}`,
        stale: stale === undefined || !foreground ? undefined : (status) => this.staleIfError(req, stale, status),
        notModified:
          revalidating === undefined
            ? undefined
            : (head, given) => {
                const answer = this.revalidated(req, at, revalidating, head, given, requestTime);
                if (answer !== undefined) result = 'revalidated';
                return answer;
              },
        storesErrors: foreground,
        onStaleServed: () => (result = 'stale'),
        onComplete: (answer) => this.store(req, at, answer, requestTime),
      }),
    );
  }

  /** The stale entry as the answer to `req` when it may stand in for an error now (RFC 5861 4). */
  private staleIfError(req: IncomingMessage, entry: CacheEntry, status: number): StoredAnswer | undefined {
    if (forbidsStale(entry.times.directives)) return undefined;
    const ageSec = currentAge(entry.times, this.now());
    if (ageSec - (entry.lifetimeSec ?? 0) > entry.staleIfErrorSec) return undefined;
    return storedAnswer(req, entry, ageSec, `Portico; hit; detail=stale-if-error; fwd-status=${status}`);
  }

  /**
   * A 304 for `stale` (RFC 9111 4.3.4): its head updated by the 304's fields and its freshness
   * recomputed, stored again when still storable, and answered to `req` (a 304 when the client's
   * own validators match it). Undefined when the 304 is for another answer: it then goes out as it
   * came, and the entry stays as it was.
   */
  private revalidated(
    req: IncomingMessage,
    at: Lookup,
    stale: CacheEntry,
    head: Record<string, string | string[]>,
    given: OutgoingHttpHeaders,
    requestTime: number,
  ): StoredAnswer | undefined {
    const age = text(given.age as string | undefined);
    const entry = revalidatedEntry(stale, head, age, requestTime, this.now(), this.rules);
    if (entry === undefined) return undefined;
    if (this.whyNotStorable(req, entry.status, entry.headers, entry.lifetimeSec) === undefined)
      this.put(req, at, entry);
    return storedAnswer(req, entry, currentAge(entry.times, this.now()), 'Portico; fwd=stale; fwd-status=304');
  }

  /** Stores a complete answer when RFC 9111 and the route allow it. */
  private store(req: IncomingMessage, at: Lookup, answer: RecordedAnswer, requestTime: number): void {
    // A HEAD answer has no body to store; the GET entry it would stand for is filled by a GET.
    if (req.method === 'HEAD') return;
    const { status, headers, sent, body } = answer;
    // Times from the head as sent: the backend's Age counts, though it is not stored (RFC 9111 4.2.3).
    const times = responseTimes(
      sent as Record<string, string | string[] | number | undefined>,
      requestTime,
      this.now(),
    );
    const entry = cacheEntry(status, headers, body, times, this.rules);
    if (this.whyNotStorable(req, status, sent, entry.lifetimeSec) !== undefined) return;
    // With compression, the coding of what was recorded must be the one this key stands for.
    // Without, the answer is kept as the backend coded it, as any cache keeps it.
    const encoding = text(headers['content-encoding'])?.trim().toLowerCase() || 'identity';
    if (this.options.compression !== undefined && encoding !== at.coding) return;
    this.put(req, at, entry);
  }

  private whyNotStorable(req: IncomingMessage, status: number, head: OutgoingHttpHeaders, lifetime?: number) {
    const request = { headers: req.headers, keyedByIdentity: this.spec.keyBy.length > 0 };
    return whyNotStorable(request, status, head as Record<string, string | string[]>, lifetime !== undefined);
  }

  /** Stores `entry` in memory, and in the shared level when there is one. */
  private put(req: IncomingMessage, at: Lookup, entry: CacheEntry): void {
    const vary = varyNames(entry.headers.vary);
    const secondary = secondaryKey(at.identity, vary, req, at.coding);
    const { routeId, shared } = this.options;
    this.options.store.set(at.primary, vary, secondary, entry, routeId);
    if (shared === undefined || entry.body.length > shared.maxEntryBytes) return;
    // Redis keeps it as long as it may be served: its freshness left plus its longest stale window.
    const staleSec = Math.max(entry.staleIfErrorSec, this.staleWhileRevalidateOf(entry));
    const ttlSec = (entry.lifetimeSec ?? 0) + staleSec - currentAge(entry.times, this.now());
    if (ttlSec > 0) shared.store.write(at.primary, vary, secondary, entry, ttlSec * 1000, routeId);
  }
}
