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
import type { EventBus, GatewayEvents } from '../observability/events.js';
import { percentileMs } from './latency-histogram.js';
import { SecondRing } from './second-ring.js';
import type { ErrorEntry, ReloadEntry, SeriesDocument, SeriesPoint, StatusClasses, TrafficWindow } from './types.js';

/** Seconds of history behind the charts. */
export const SERIES_SECONDS = 300;
const MINUTE = 60;
const MAX_ERRORS = 50;
const MAX_RELOADS = 20;
/** Problems kept per rejected reload: the first ones say what to fix. */
const MAX_PROBLEM_LINES = 20;
/** Upstream failures waiting for their request's end, to say where an error came from. */
const MAX_PENDING_CAUSES = 64;

/** Counter fields of a traffic ring. */
const F = {
  requests: 0,
  s1xx: 1,
  s2xx: 2,
  s3xx: 3,
  s4xx: 4,
  s5xx: 5,
  rateLimited: 6,
  gatewayErrors: 7,
  mappingFailures: 8,
} as const;
const TRAFFIC_FIELDS = 9;
/** Counter fields of a backend ring. */
const CALLS = 0;
const FAILURES = 1;

/** The key of requests no route matched. */
export const UNMATCHED = 'unmatched';

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
}

/** `now`: milliseconds of wall-clock time (tests move it by hand). */
export function createLiveStats(events: EventBus, now: () => number = Date.now): LiveStats {
  // One slot more than the seconds read: the second being counted now is never read.
  const all = new SecondRing(SERIES_SECONDS + 1, TRAFFIC_FIELDS, true);
  const routes = new Map<string, SecondRing>();
  const origins = new Map<string, SecondRing>();
  const streams = new Map<string, { sse: number; websocket: number }>();
  const open = { sse: 0, websocket: 0 };
  const errors: ErrorEntry[] = [];
  let errorsNext = 0;
  const reloads: ReloadEntry[] = [];
  const causes = new Map<string, string>();
  let rateLimitedTotal = 0;
  let unsubscribe: (() => void)[] = [];

  const routeRing = (id: string) => {
    let ring = routes.get(id);
    if (ring === undefined) routes.set(id, (ring = new SecondRing(MINUTE + 1, TRAFFIC_FIELDS, true)));
    return ring;
  };
  const originRing = (origin: string) => {
    let ring = origins.get(origin);
    if (ring === undefined) origins.set(origin, (ring = new SecondRing(MINUTE + 1, 2, false)));
    return ring;
  };
  const pushError = (entry: ErrorEntry) => {
    errors[errorsNext] = entry;
    errorsNext = (errorsNext + 1) % MAX_ERRORS;
  };

  const handlers: { [K in keyof GatewayEvents]?: (e: GatewayEvents[K]) => void } = {
    'request:end'(e) {
      const t = now();
      const sec = Math.floor(t / 1000);
      const route = routeRing(e.routeId ?? UNMATCHED);
      const cls = e.status >= 100 && e.status < 600 ? Math.floor(e.status / 100) : 0;
      countRequest(all, sec, cls, e.durationMs);
      countRequest(route, sec, cls, e.durationMs);
      if (e.errorCode === undefined && e.status < 500) return;
      if (e.errorCode === 'GW_RATE_LIMITED') {
        rateLimitedTotal++;
        all.add(sec, F.rateLimited);
        route.add(sec, F.rateLimited);
      }
      if (e.errorCode !== undefined) {
        all.add(sec, F.gatewayErrors);
        route.add(sec, F.gatewayErrors);
      }
      const cause = causes.get(e.requestId);
      if (cause !== undefined) causes.delete(e.requestId);
      const q = e.path.indexOf('?');
      pushError({
        time: new Date(t).toISOString(),
        requestId: e.requestId,
        method: e.method,
        path: q < 0 ? e.path : e.path.slice(0, q),
        routeId: e.routeId ?? null,
        status: e.status,
        code: e.errorCode ?? 'BACKEND_5XX',
        ...(cause === undefined ? {} : { detail: cause }),
      });
    },
    'upstream:response'(e) {
      const sec = Math.floor(now() / 1000);
      const ring = originRing(e.origin);
      ring.add(sec, CALLS);
      if (e.status >= 500) ring.add(sec, FAILURES);
    },
    'upstream:error'(e) {
      const sec = Math.floor(now() / 1000);
      const ring = originRing(e.origin);
      ring.add(sec, CALLS);
      ring.add(sec, FAILURES);
      // Kept until the request ends (bounded: a request may end without an error answer).
      if (causes.size >= MAX_PENDING_CAUSES) causes.delete(causes.keys().next().value!);
      causes.set(e.requestId, `${e.kind} from ${e.origin}`);
    },
    'mapping:fail'(e) {
      const t = now();
      const sec = Math.floor(t / 1000);
      all.add(sec, F.mappingFailures);
      routeRing(e.routeId).add(sec, F.mappingFailures);
      pushError({
        time: new Date(t).toISOString(),
        requestId: e.requestId,
        method: e.routeId.split(' ')[0] ?? '',
        path: e.url,
        routeId: e.routeId,
        status: 200,
        code: 'MAPPING_FAILED',
        detail: `tag ${e.tag}: ${e.reason} (${e.items} item${e.items === 1 ? '' : 's'})`,
      });
    },
    'stream:open'(e) {
      open[e.kind]++;
      const s = streams.get(e.routeId) ?? { sse: 0, websocket: 0 };
      s[e.kind]++;
      streams.set(e.routeId, s);
    },
    'stream:close'(e) {
      open[e.kind] = Math.max(0, open[e.kind] - 1);
      const s = streams.get(e.routeId);
      if (s === undefined) return;
      s[e.kind] = Math.max(0, s[e.kind] - 1);
      if (s.sse === 0 && s.websocket === 0) streams.delete(e.routeId);
    },
    'config:reload'(e) {
      reloads.unshift({
        time: new Date(now()).toISOString(),
        ok: e.ok,
        file: e.file,
        ...(e.problems === undefined ? {} : { problems: e.problems.slice(0, MAX_PROBLEM_LINES) }),
      });
      reloads.length = Math.min(reloads.length, MAX_RELOADS);
    },
  };

  const lastComplete = () => Math.floor(now() / 1000) - 1;

  return {
    start() {
      if (unsubscribe.length > 0) return;
      for (const name of Object.keys(handlers) as (keyof GatewayEvents)[])
        unsubscribe.push(events.on(name, handlers[name] as (e: GatewayEvents[typeof name]) => void));
    },
    stop() {
      for (const off of unsubscribe) off();
      unsubscribe = [];
    },
    traffic() {
      const sec = lastComplete();
      return { lastSecond: all.sum(sec, 1).fields[F.requests]!, lastMinute: windowOf(all, sec) };
    },
    routeTraffic(routeId) {
      const ring = routes.get(routeId);
      return ring === undefined ? EMPTY_WINDOW : windowOf(ring, lastComplete());
    },
    backendCalls(origin) {
      const ring = origins.get(origin);
      if (ring === undefined) return { calls: 0, failures: 0 };
      const { fields } = ring.sum(lastComplete(), MINUTE);
      return { calls: fields[CALLS]!, failures: fields[FAILURES]! };
    },
    openStreams: () => ({ ...open }),
    routeStreams(routeId) {
      const s = streams.get(routeId);
      return s === undefined ? 0 : s.sse + s.websocket;
    },
    get rateLimitedTotal() {
      return rateLimitedTotal;
    },
    errors() {
      // The ring from newest to oldest.
      const out: ErrorEntry[] = [];
      for (let i = 1; i <= errors.length; i++) out.push(errors[(errorsNext - i + MAX_ERRORS) % MAX_ERRORS]!);
      return out;
    },
    reloads: () => [...reloads],
    series() {
      const end = lastComplete();
      const points: SeriesPoint[] = [];
      for (let t = end - SERIES_SECONDS + 1; t <= end; t++) points.push(pointOf(all, t));
      return { intervalSec: 1, points };
    },
    lastPoint: () => pointOf(all, lastComplete()),
    tracked: () => ({ routes: routes.size, origins: origins.size }),
    prune(routeIds, keepOrigins) {
      const stale = lastComplete() - MINUTE;
      for (const [id, ring] of routes)
        if (!routeIds.has(id) && id !== UNMATCHED && ring.newestSecond < stale) routes.delete(id);
      for (const [origin, ring] of origins)
        if (!keepOrigins.has(origin) && ring.newestSecond < stale) origins.delete(origin);
    },
  };
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
  return { t, requests: fields[F.requests]!, errors: fields[F.s5xx]!, p50Ms: percentiles[0]!, p99Ms: percentiles[1]! };
}

function countRequest(ring: SecondRing, sec: number, statusClass: number, ms: number): void {
  ring.add(sec, F.requests);
  if (statusClass > 0) ring.add(sec, statusClass);
  ring.observe(sec, ms);
}

/** The minute that ends with second `sec`. */
function windowOf(ring: SecondRing, sec: number): TrafficWindow {
  const { fields, latency } = ring.sum(sec, MINUTE);
  const statuses: StatusClasses = {
    '1xx': fields[F.s1xx]!,
    '2xx': fields[F.s2xx]!,
    '3xx': fields[F.s3xx]!,
    '4xx': fields[F.s4xx]!,
    '5xx': fields[F.s5xx]!,
  };
  return {
    requests: fields[F.requests]!,
    perSec: Math.round((fields[F.requests]! / MINUTE) * 100) / 100,
    statuses,
    p50Ms: percentileMs(latency, 0.5),
    p99Ms: percentileMs(latency, 0.99),
    rateLimited: fields[F.rateLimited]!,
    gatewayErrors: fields[F.gatewayErrors]!,
    mappingFailures: fields[F.mappingFailures]!,
  };
}
