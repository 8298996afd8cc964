/**
 * The contracts of the metrics modules, in a leaf of their own so that metrics.ts, the modules
 * under metrics/ and the gateway can share them without importing one another.
 */
import type { ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { GatewayEvents } from '../types.js';

/** One target of a named upstream, as the metrics read it. */
export interface TargetStats {
  readonly upstream: string;
  readonly target: string;
  readonly requests: number;
  readonly failures: number;
  readonly ejections: number;
  readonly ejected: boolean;
  readonly healthy: boolean;
  readonly inFlight: number;
}

/** One limit of admission control (layers/admission.ts), as the metrics and the status page read it. */
export interface AdmissionStats {
  readonly scope: 'gateway' | 'route';
  /** The route id (`GET /users/{id}`), then its hosts if it has any (`GET /a a.example.com`); '' for the gateway's limit. */
  readonly route: string;
  readonly inFlight: number;
  readonly limit: number;
  readonly refused: number;
}

/** The counts of the HTTP cache's broadcast (cache/broadcast.ts `BroadcastStats`). */
export interface CacheBroadcastStats {
  readonly subscribed: boolean;
  readonly sent: Readonly<Record<'purge' | 'invalidation', number>>;
  readonly received: Readonly<Record<'purge' | 'invalidation', number>>;
  readonly malformed: number;
  readonly resets: Readonly<Record<'resubscribed' | 'backlog', number>>;
}

/** State read at scrape time; every source is optional. */
export interface MetricsSources {
  readonly inFlight?: { readonly count: number };
  readonly circuits?: () => Iterable<{ readonly origin: string; readonly state: string }>;
  readonly mappingCache?: () => {
    readonly hits: number;
    readonly misses: number;
    readonly sharedHits?: number;
    readonly coalesced?: number;
    readonly evictions: number;
    readonly expirations?: number;
    readonly size: number;
  };
  readonly rateLimitBuckets?: () => number;
  /** Callers the local quota counters hold (layers/quota.ts). */
  readonly quotaKeys?: () => number;
  /** The targets of named upstreams, with their counts. */
  readonly targets?: () => Iterable<TargetStats>;
  /** Whether the Redis connection (config.redis) is established; absent without config.redis. */
  readonly redisUp?: () => boolean;
  /** Bytes of request bodies reserved in temporary files now (layers/spill-budget.ts). */
  readonly spilledBytes?: () => number;
  /** The limits of admission control with their counts; absent: no series. */
  readonly admission?: () => Iterable<AdmissionStats>;
  /** Entries and bytes in the HTTP cache now (cache/store.ts). */
  readonly httpCache?: () => { readonly entries: number; readonly bytes: number };
  /** The HTTP cache's broadcast of purges to the other replicas (cache/broadcast.ts); absent without it. */
  readonly cacheBroadcast?: () => CacheBroadcastStats;
  /** Log lines dropped because the log output could not keep up (log-output.ts `droppedLogLines`). */
  readonly logLinesDropped?: () => number;
}

export interface Metrics {
  readonly registry: Registry;
  /** Subscribes to the bus (idempotent). */
  enable(): void;
  /** Unsubscribes: a gateway with `telemetry.metrics: false` pays nothing per request. */
  disable(): void;
  readonly enabled: boolean;
  /** The exposition text. */
  render(): Promise<string>;
  /** Answers GET /metrics. */
  serve(res: ServerResponse, render?: () => Promise<string>): void;
}

/**
 * The listeners one source module subscribes while metrics are enabled. Each event has at most one
 * listener across all modules, so an event costs one call however many series it feeds.
 */
export type MetricHandlers = { [K in keyof GatewayEvents]?: (e: GatewayEvents[K]) => void };

/**
 * One source module: registers its series on `registry` (the scrape-time ones only for the sources
 * it is given) and returns its listeners, not yet subscribed.
 */
export type MetricsModule = (registry: Registry, sources: MetricsSources) => MetricHandlers;
