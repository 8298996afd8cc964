/**
 * The admin JSON API's documents (docs/dashboard.md), shared by the listener, the page's feed and
 * `portico status`. Times are ISO 8601 strings, latencies milliseconds, rates per second.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MappingCacheStats } from '../mapping/types.js';
import type { AdmissionStats } from '../observability/metrics/types.js';

/** Answers by status class. */
export interface StatusClasses {
  readonly '1xx': number;
  readonly '2xx': number;
  readonly '3xx': number;
  readonly '4xx': number;
  readonly '5xx': number;
}

/** Traffic over a window (the last minute). `p50Ms`/`p99Ms` are null without a request. */
export interface TrafficWindow {
  readonly requests: number;
  readonly perSec: number;
  readonly statuses: StatusClasses;
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  /** 429 answers of the rate limiter. */
  readonly rateLimited: number;
  /** Answers the gateway wrote itself (an `X-Portico-Error` code). */
  readonly gatewayErrors: number;
  /** Mapping rules that left items of a response without their tag. */
  readonly mappingFailures: number;
}

export interface RouteStatus {
  /** `METHOD /route`, as in logs and metrics. */
  readonly id: string;
  /** `GET,HEAD`, `POST`, `WS`... as `portico routes` prints them. */
  readonly methods: string;
  /** The path clients call, basePath included. */
  readonly path: string;
  readonly backend: string;
  /** public, jwt, jwks or delegated. */
  readonly auth: string;
  /** standard, mapping, aggregate, sse or websocket. */
  readonly kind: string;
  /** The tags of its mapping rules. */
  readonly mapping: readonly string[];
  readonly stream: 'sse' | 'websocket' | null;
  readonly lastMinute: TrafficWindow;
  readonly openStreams: number;
  /** A split route's arms (service or upstream as written), weights and requests since the start; null without a split. */
  readonly split: readonly { readonly arm: string; readonly weight: number; readonly requests: number }[] | null;
  /** A mirrored route's mirror and its copies since the start; null without a mirror. */
  readonly mirror: {
    readonly service: string;
    readonly percent: number;
    readonly answered: number;
    readonly failed: number;
    readonly dropped: number;
  } | null;
}

export interface TargetStatus {
  readonly target: string;
  readonly healthy: boolean;
  readonly ejected: boolean;
  readonly requests: number;
  readonly failures: number;
  readonly inFlight: number;
}

export interface BackendStatus {
  /** `scheme://host:port`, or a named upstream's name. */
  readonly origin: string;
  readonly circuit: { readonly state: string; readonly consecutiveFailures: number };
  /** Present for a named upstream: its targets and their health. */
  readonly targets?: readonly TargetStatus[];
  /** Ids of the routes that call it (as their service, a backend of theirs, or a mapping rule). */
  readonly routes: readonly string[];
  /** Calls made to it in the last minute, and those without an answer or with a 5xx. */
  readonly lastMinute: { readonly calls: number; readonly failures: number };
}

export interface ReloadEntry {
  readonly time: string;
  readonly ok: boolean;
  readonly file: string;
  /** Why it was rejected: `FILE:LINE:COL: message` lines. */
  readonly problems?: readonly string[];
}

export interface ErrorEntry {
  readonly time: string;
  readonly requestId: string;
  readonly method: string;
  /** The request path, without its query. */
  readonly path: string;
  readonly routeId: string | null;
  readonly status: number;
  /** The gateway's error code, `BACKEND_5XX` for a backend's own 5xx, `MAPPING_FAILED` for a mapping rule. */
  readonly code: string;
  /** What failed behind it: the upstream origin and kind of failure, or the mapping tag and reason. */
  readonly detail?: string;
}

/** A plugin of the configuration (docs/plugins.md), with what its stages did since the gateway started. */
export interface PluginStatus {
  readonly name: string;
  readonly module: string;
  /** Stages run (every stage of every request counts one). */
  readonly runs: number;
  /** Stages that threw, rejected or returned no answer (500 GW_PLUGIN_FAILED). */
  readonly failed: number;
  /** Stages past the plugin's timeoutMs (504 GW_PLUGIN_TIMEOUT). */
  readonly timeouts: number;
  /** Mean time of a stage in milliseconds; null before one ran. */
  readonly avgMs: number | null;
}

export interface StatusDocument {
  readonly gateway: {
    readonly version: string;
    readonly node: string;
    readonly pid: number;
    /** The cluster worker that answered (`--workers N`); absent in a single process. */
    readonly worker?: number;
    readonly startedAt: string;
    readonly uptimeSec: number;
    readonly configFile: string;
    readonly inFlight: number;
  };
  readonly reloads: { readonly last: ReloadEntry | null; readonly history: readonly ReloadEntry[] };
  readonly traffic: { readonly lastSecond: number; readonly lastMinute: TrafficWindow };
  readonly routes: readonly RouteStatus[];
  readonly circuitBreaker: { readonly enabled: boolean };
  readonly backends: readonly BackendStatus[];
  /** The mapping cache's counters (mapping/cache.ts), whether it is on, and hits / (hits + misses), null before a lookup. */
  readonly mappingCache: MappingCacheStats & { readonly enabled: boolean; readonly hitRatio: number | null };
  /** The HTTP cache of routes with `cache:` (docs/caching.md): answers since the start by result, and what is stored now. */
  readonly httpCache: HttpCacheStatus;
  readonly rateLimit: {
    readonly enabled: boolean;
    readonly rejectedLastMinute: number;
    readonly rejectedTotal: number;
  };
  /** Quotas on (config.quotas or a route's quota), and the callers nearest their limits. */
  readonly quotas: { readonly enabled: boolean };
  /**
   * At most CALLERS_SHOWN callers metered by a quota or refused by a rate limit, fullest first
   * (layers/quota-usage.ts): as this process saw them; with Redis, the counts are the shared ones.
   */
  readonly callers: readonly CallerStatus[];
  readonly streams: { readonly sse: number; readonly websocket: number };
  /** Admission control (docs/overload.md): on when a limit is set; each limit with its counts, the gateway's first. */
  readonly admission: { readonly enabled: boolean; readonly limits: readonly AdmissionStats[] };
  /** The configuration's plugins, in the order written; empty without any. */
  readonly plugins: readonly PluginStatus[];
  /** Newest first, at most 50. */
  readonly errors: readonly ErrorEntry[];
}

/** A caller on the status page: what it is counted by, its quota windows and its refusals. */
export interface CallerStatus {
  /** `consumer:ID`, `claim:VALUE`, `header:VALUE` or a client address; a long value is `#` and its hash. */
  readonly caller: string;
  /** The route whose own limits these are; undefined for the shared ones. */
  readonly route: string | undefined;
  readonly plan: string | undefined;
  readonly windows: readonly {
    readonly window: string;
    readonly used: number;
    readonly limit: number;
    readonly resetSec: number;
  }[];
  readonly quotaRefused: number;
  readonly rateLimited: number;
}

/** One second of traffic, for the charts. */
export interface SeriesPoint {
  /** Unix time in seconds. */
  readonly t: number;
  readonly requests: number;
  readonly errors: number;
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
}

export interface SeriesDocument {
  readonly intervalSec: 1;
  /** Oldest first: the last 300 complete seconds. */
  readonly points: readonly SeriesPoint[];
}

/** GET /metrics as the admin listener serves it (ops/metrics-access.ts says who reads it). */
export interface AdminMetrics {
  /** Whether the request bears `telemetry.metricsToken`, which opens /metrics and nothing else here. */
  bearsToken(req: IncomingMessage): boolean;
  /** Writes the metrics, or 404 while they are off. */
  serve(req: IncomingMessage, res: ServerResponse): void;
}

/** The status page's cache panel: the counts of `portico_cache_requests_total` and the store's gauges. */
export interface HttpCacheStatus {
  /** Some route caches. */
  readonly enabled: boolean;
  /** Its answers are shared through Redis (`config.cache.redis`). */
  readonly shared: boolean;
  /** Answers since the start, by result (`portico_cache_requests_total`). */
  readonly hits: number;
  readonly misses: number;
  readonly stale: number;
  readonly revalidated: number;
  /** Hits over every lookup; null before the first. */
  readonly hitRatio: number | null;
  /** Stored now (`portico_cache_entries`, `portico_cache_bytes`). */
  readonly entries: number;
  readonly bytes: number;
  /**
   * Purges told to and heard from other replicas since the start (`portico_cache_broadcast_*`,
   * summed over causes), and the times the memory level was dropped whole; null without
   * `cache.redis.broadcast`.
   */
  readonly broadcast: {
    readonly subscribed: boolean;
    readonly sent: number;
    readonly received: number;
    readonly resets: number;
  } | null;
}
