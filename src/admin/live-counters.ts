/**
 * The rings and lists behind live-stats.ts, and what each gateway event adds to them: a few
 * counter increments in fixed-size rings (second-ring.ts), or one entry in a bounded list.
 */
import type { GatewayEvents } from '../observability/events.js';
import { SecondRing } from './second-ring.js';
import type { ErrorEntry, ReloadEntry } from './types.js';

/** Seconds of history behind the charts. */
export const SERIES_SECONDS = 300;
export const MINUTE = 60;
const MAX_ERRORS = 50;
const MAX_RELOADS = 20;
/** Problems kept per rejected reload: the first ones say what to fix. */
const MAX_PROBLEM_LINES = 20;
/** Upstream failures waiting for their request's end, to say where an error came from. */
const MAX_PENDING_CAUSES = 64;

/** Counter fields of a traffic ring. */
export const FIELD = {
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
export const CALLS = 0;
export const FAILURES = 1;

/** The key of requests no route matched. */
export const UNMATCHED = 'unmatched';

/** What one plugin's stages did since the gateway started. */
export interface PluginCounts {
  runs: number;
  totalMs: number;
  failed: number;
  timeouts: number;
}

/** Open streams of one kind and another. */
export interface StreamCounts {
  sse: number;
  websocket: number;
}

/** Counts the gateway's events; `now` is wall-clock milliseconds. Reading is live-stats.ts's. */
export class LiveCounters {
  // One slot more than the seconds read: the second being counted now is never read.
  readonly all = new SecondRing(SERIES_SECONDS + 1, TRAFFIC_FIELDS, true);
  readonly routes = new Map<string, SecondRing>();
  readonly origins = new Map<string, SecondRing>();
  readonly streams = new Map<string, StreamCounts>();
  readonly open: StreamCounts = { sse: 0, websocket: 0 };
  /** The last errors, a ring of MAX_ERRORS whose next slot is `errorsNext`. */
  private readonly errorRing: ErrorEntry[] = [];
  private errorsNext = 0;
  /** Newest first. */
  readonly reloads: ReloadEntry[] = [];
  private readonly causes = new Map<string, string>();
  rateLimitedTotal = 0;
  /** By plugin name: bounded by the configurations' plugins lists. */
  readonly plugins = new Map<string, PluginCounts>();

  constructor(private readonly now: () => number) {}

  requestEnd(e: GatewayEvents['request:end']): void {
    const t = this.now();
    const sec = Math.floor(t / 1000);
    const route = this.routeRing(e.routeId ?? UNMATCHED);
    const cls = e.status >= 100 && e.status < 600 ? Math.floor(e.status / 100) : 0;
    countRequest(this.all, sec, cls, e.durationMs);
    countRequest(route, sec, cls, e.durationMs);
    if (e.errorCode === undefined && e.status < 500) return;
    if (e.errorCode === 'GW_RATE_LIMITED') {
      this.rateLimitedTotal++;
      this.all.add(sec, FIELD.rateLimited);
      route.add(sec, FIELD.rateLimited);
    }
    if (e.errorCode !== undefined) {
      this.all.add(sec, FIELD.gatewayErrors);
      route.add(sec, FIELD.gatewayErrors);
    }
    const cause = this.causes.get(e.requestId);
    if (cause !== undefined) this.causes.delete(e.requestId);
    const q = e.path.indexOf('?');
    this.pushError({
      time: new Date(t).toISOString(),
      requestId: e.requestId,
      method: e.method,
      path: q < 0 ? e.path : e.path.slice(0, q),
      routeId: e.routeId ?? null,
      status: e.status,
      code: e.errorCode ?? 'BACKEND_5XX',
      ...(cause === undefined ? {} : { detail: cause }),
    });
  }

  upstreamResponse(e: GatewayEvents['upstream:response']): void {
    const sec = Math.floor(this.now() / 1000);
    const ring = this.originRing(e.origin);
    ring.add(sec, CALLS);
    if (e.status >= 500) ring.add(sec, FAILURES);
  }

  upstreamError(e: GatewayEvents['upstream:error']): void {
    const sec = Math.floor(this.now() / 1000);
    const ring = this.originRing(e.origin);
    ring.add(sec, CALLS);
    ring.add(sec, FAILURES);
    // Kept until the request ends (bounded: a request may end without an error answer).
    if (this.causes.size >= MAX_PENDING_CAUSES) this.causes.delete(this.causes.keys().next().value!);
    this.causes.set(e.requestId, `${e.kind} from ${e.origin}`);
  }

  mappingFail(e: GatewayEvents['mapping:fail']): void {
    const t = this.now();
    const sec = Math.floor(t / 1000);
    this.all.add(sec, FIELD.mappingFailures);
    this.routeRing(e.routeId).add(sec, FIELD.mappingFailures);
    this.pushError({
      time: new Date(t).toISOString(),
      requestId: e.requestId,
      method: e.routeId.split(' ')[0] ?? '',
      path: e.url,
      routeId: e.routeId,
      status: 200,
      code: 'MAPPING_FAILED',
      detail: `tag ${e.tag}: ${e.reason} (${e.items} item${e.items === 1 ? '' : 's'})`,
    });
  }

  streamOpen(e: GatewayEvents['stream:open']): void {
    this.open[e.kind]++;
    const s = this.streams.get(e.routeId) ?? { sse: 0, websocket: 0 };
    s[e.kind]++;
    this.streams.set(e.routeId, s);
  }

  streamClose(e: GatewayEvents['stream:close']): void {
    this.open[e.kind] = Math.max(0, this.open[e.kind] - 1);
    const s = this.streams.get(e.routeId);
    if (s === undefined) return;
    s[e.kind] = Math.max(0, s[e.kind] - 1);
    if (s.sse === 0 && s.websocket === 0) this.streams.delete(e.routeId);
  }

  configReload(e: GatewayEvents['config:reload']): void {
    this.reloads.unshift({
      time: new Date(this.now()).toISOString(),
      ok: e.ok,
      file: e.file,
      ...(e.problems === undefined ? {} : { problems: e.problems.slice(0, MAX_PROBLEM_LINES) }),
    });
    this.reloads.length = Math.min(this.reloads.length, MAX_RELOADS);
  }

  /** The errors kept, newest first. */
  pluginRun(e: GatewayEvents['plugin:run']): void {
    const c = this.pluginCounts(e.plugin);
    c.runs++;
    c.totalMs += e.durationMs;
  }

  pluginError(e: GatewayEvents['plugin:error']): void {
    const c = this.pluginCounts(e.plugin);
    // A failed or timed-out stage is a run too: its time is unknown, so it adds none.
    c.runs++;
    if (e.kind === 'timeout') c.timeouts++;
    else c.failed++;
  }

  private pluginCounts(name: string): PluginCounts {
    let c = this.plugins.get(name);
    if (c === undefined) this.plugins.set(name, (c = { runs: 0, totalMs: 0, failed: 0, timeouts: 0 }));
    return c;
  }

  errors(): ErrorEntry[] {
    // The ring from newest to oldest.
    const out: ErrorEntry[] = [];
    for (let i = 1; i <= this.errorRing.length; i++)
      out.push(this.errorRing[(this.errorsNext - i + MAX_ERRORS) % MAX_ERRORS]!);
    return out;
  }

  private routeRing(id: string): SecondRing {
    let ring = this.routes.get(id);
    if (ring === undefined) this.routes.set(id, (ring = new SecondRing(MINUTE + 1, TRAFFIC_FIELDS, true)));
    return ring;
  }

  private originRing(origin: string): SecondRing {
    let ring = this.origins.get(origin);
    if (ring === undefined) this.origins.set(origin, (ring = new SecondRing(MINUTE + 1, 2, false)));
    return ring;
  }

  private pushError(entry: ErrorEntry): void {
    this.errorRing[this.errorsNext] = entry;
    this.errorsNext = (this.errorsNext + 1) % MAX_ERRORS;
  }
}

function countRequest(ring: SecondRing, sec: number, statusClass: number, ms: number): void {
  ring.add(sec, FIELD.requests);
  if (statusClass > 0) ring.add(sec, statusClass);
  ring.observe(sec, ms);
}
