/**
 * What the status page shows about traffic, computed from the event bus: per second over the last
 * five minutes for the whole gateway, over the last minute per route and per backend origin,
 * the open streams, the last 50 errors and the last 20 reloads.
 *
 * Like metrics.ts, it subscribes only when started, and the gateway starts it only when
 * `config.admin` is present: a gateway without the admin listener pays nothing per request.
 * Each event costs O(1): a few counter increments in fixed-size rings (second-ring.ts). Memory is
 * bounded by the configuration (one minute ring per route id and per origin), not by traffic.
 */
import type { EventBus } from '../observability/events.js';
import { percentileMs } from './latency-histogram.js';
import { CALLS, FAILURES, FIELD, LiveCounters, MINUTE, SERIES_SECONDS, UNMATCHED } from './live-counters.js';
import type { SecondRing } from './second-ring.js';
import { TrafficTotals, type MirrorTotals } from './traffic-totals.js';
import type { ErrorEntry, ReloadEntry, SeriesDocument, SeriesPoint, StatusClasses, TrafficWindow } from './types.js';

export { SERIES_SECONDS, UNMATCHED } from './live-counters.js';

export interface LiveStats {
  /** Subscribes to the bus (idempotent). */
  start(): void;
  /** Unsubscribes. */
  stop(): void;
  /** The gateway's traffic over the last minute and in the last complete second. */
  traffic(): { lastSecond: number; lastMinute: TrafficWindow };
  /** A route's traffic over the last minute. */
  routeTraffic(routeId: string): TrafficWindow;
  /** Calls to an origin over the last minute. */
  backendCalls(origin: string): { calls: number; failures: number };
  /** Open SSE streams and WebSocket tunnels, in all and for one route. */
  openStreams(): { sse: number; websocket: number };
  routeStreams(routeId: string): number;
  /** Every 429 of the rate limiter since the start. */
  readonly rateLimitedTotal: number;
  /** Newest first. */
  errors(): ErrorEntry[];
  /** What a plugin's stages did since the gateway started. */
  plugin(name: string): { runs: number; failed: number; timeouts: number; avgMs: number | null };
  /** Newest first. */
  reloads(): ReloadEntry[];
  /** The last 300 complete seconds, oldest first. */
  series(): SeriesDocument;
  /** The last complete second, as the series' newest point. */
  lastPoint(): SeriesPoint;
  /** Route ids and origins with a ring of their own (memory grows with these, never with traffic). */
  tracked(): { routes: number; origins: number };
  /** Forgets routes and origins that are not in `keep` and saw nothing in the last minute. */
  prune(routeIds: ReadonlySet<string>, origins: ReadonlySet<string>): void;
  /** Requests sent to one arm of a split route since the start. */
  armRequests(routeId: string, arm: string): number;
  /** A mirrored route's copies since the start. */
  mirrorTotals(routeId: string): MirrorTotals;
  /** Lookups of the HTTP cache since the start, by result (hit, miss, stale, revalidated). */
  cacheResults(): ReadonlyMap<string, number>;
}

/** `now`: milliseconds of wall-clock time (tests move it by hand). */
export function createLiveStats(events: EventBus, now: () => number = Date.now): LiveStats {
  return new LiveStatsReader(events, new LiveCounters(now), now);
}

/** Reads one set of counters for the status page, and subscribes them to the bus. */
class LiveStatsReader implements LiveStats {
  private unsubscribe: (() => void)[] = [];
  private readonly totals = new TrafficTotals();
  private readonly cache = new Map<string, number>();

  constructor(
    private readonly events: EventBus,
    private readonly counters: LiveCounters,
    private readonly now: () => number,
  ) {}

  start(): void {
    if (this.unsubscribe.length > 0) return;
    const { events, counters: c } = this;
    this.unsubscribe = [
      events.on('request:end', (e) => c.requestEnd(e)),
      events.on('upstream:response', (e) => c.upstreamResponse(e)),
      events.on('upstream:error', (e) => c.upstreamError(e)),
      events.on('mapping:fail', (e) => c.mappingFail(e)),
      events.on('stream:open', (e) => c.streamOpen(e)),
      events.on('stream:close', (e) => c.streamClose(e)),
      events.on('config:reload', (e) => c.configReload(e)),
      events.on('split:choice', (e) => this.totals.splitChoice(e)),
      events.on('mirror:end', (e) => this.totals.mirrorEnd(e)),
      events.on('mirror:dropped', (e) => this.totals.mirrorDropped(e)),
      events.on('plugin:run', (e) => c.pluginRun(e)),
      events.on('plugin:error', (e) => c.pluginError(e)),
      events.on('cache:lookup', (e) => this.cache.set(e.result, (this.cache.get(e.result) ?? 0) + 1)),
    ];
  }

  stop(): void {
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
  }

  traffic(): { lastSecond: number; lastMinute: TrafficWindow } {
    const sec = this.lastComplete();
    const { all } = this.counters;
    return { lastSecond: all.sum(sec, 1).fields[FIELD.requests]!, lastMinute: windowOf(all, sec) };
  }

  routeTraffic(routeId: string): TrafficWindow {
    const ring = this.counters.routes.get(routeId);
    return ring === undefined ? EMPTY_WINDOW : windowOf(ring, this.lastComplete());
  }

  backendCalls(origin: string): { calls: number; failures: number } {
    const ring = this.counters.origins.get(origin);
    if (ring === undefined) return { calls: 0, failures: 0 };
    const { fields } = ring.sum(this.lastComplete(), MINUTE);
    return { calls: fields[CALLS]!, failures: fields[FAILURES]! };
  }

  openStreams(): { sse: number; websocket: number } {
    return { ...this.counters.open };
  }

  routeStreams(routeId: string): number {
    const s = this.counters.streams.get(routeId);
    return s === undefined ? 0 : s.sse + s.websocket;
  }

  get rateLimitedTotal(): number {
    return this.counters.rateLimitedTotal;
  }

  errors(): ErrorEntry[] {
    return this.counters.errors();
  }

  plugin(name: string): { runs: number; failed: number; timeouts: number; avgMs: number | null } {
    const c = this.counters.plugins.get(name);
    if (c === undefined) return { runs: 0, failed: 0, timeouts: 0, avgMs: null };
    const timed = c.runs - c.failed - c.timeouts;
    return {
      runs: c.runs,
      failed: c.failed,
      timeouts: c.timeouts,
      avgMs: timed === 0 ? null : Math.round((c.totalMs / timed) * 1000) / 1000,
    };
  }

  reloads(): ReloadEntry[] {
    return [...this.counters.reloads];
  }

  series(): SeriesDocument {
    const end = this.lastComplete();
    const points: SeriesPoint[] = [];
    for (let t = end - SERIES_SECONDS + 1; t <= end; t++) points.push(pointOf(this.counters.all, t));
    return { intervalSec: 1, points };
  }

  lastPoint(): SeriesPoint {
    return pointOf(this.counters.all, this.lastComplete());
  }

  tracked(): { routes: number; origins: number } {
    return { routes: this.counters.routes.size, origins: this.counters.origins.size };
  }

  armRequests(routeId: string, arm: string): number {
    return this.totals.armRequests(routeId, arm);
  }

  mirrorTotals(routeId: string): MirrorTotals {
    return this.totals.mirror(routeId);
  }

  cacheResults(): ReadonlyMap<string, number> {
    return this.cache;
  }

  prune(routeIds: ReadonlySet<string>, keepOrigins: ReadonlySet<string>): void {
    this.totals.prune(routeIds);
    const stale = this.lastComplete() - MINUTE;
    const { routes, origins } = this.counters;
    for (const [id, ring] of routes)
      if (!routeIds.has(id) && id !== UNMATCHED && ring.newestSecond < stale) routes.delete(id);
    for (const [origin, ring] of origins)
      if (!keepOrigins.has(origin) && ring.newestSecond < stale) origins.delete(origin);
  }

  private lastComplete(): number {
    return Math.floor(this.now() / 1000) - 1;
  }
}

const EMPTY_WINDOW: TrafficWindow = {
  requests: 0,
  perSec: 0,
  statuses: { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 },
  p50Ms: null,
  p99Ms: null,
  rateLimited: 0,
  gatewayErrors: 0,
  mappingFailures: 0,
};

function pointOf(ring: SecondRing, t: number): SeriesPoint {
  const { fields, percentiles } = ring.second(t, [0.5, 0.99]);
  return {
    t,
    requests: fields[FIELD.requests]!,
    errors: fields[FIELD.s5xx]!,
    p50Ms: percentiles[0]!,
    p99Ms: percentiles[1]!,
  };
}

/** The minute that ends with second `sec`. */
function windowOf(ring: SecondRing, sec: number): TrafficWindow {
  const { fields, latency } = ring.sum(sec, MINUTE);
  const statuses: StatusClasses = {
    '1xx': fields[FIELD.s1xx]!,
    '2xx': fields[FIELD.s2xx]!,
    '3xx': fields[FIELD.s3xx]!,
    '4xx': fields[FIELD.s4xx]!,
    '5xx': fields[FIELD.s5xx]!,
  };
  return {
    requests: fields[FIELD.requests]!,
    perSec: Math.round((fields[FIELD.requests]! / MINUTE) * 100) / 100,
    statuses,
    p50Ms: percentileMs(latency, 0.5),
    p99Ms: percentileMs(latency, 0.99),
    rateLimited: fields[FIELD.rateLimited]!,
    gatewayErrors: fields[FIELD.gatewayErrors]!,
    mappingFailures: fields[FIELD.mappingFailures]!,
  };
}
