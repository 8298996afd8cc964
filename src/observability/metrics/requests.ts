/**
 * Requests: 'request:end' into the request duration and count, aborted requests, gateway errors
 * and rate-limit and quota refusals; requests in flight, the rate limiter's buckets and the quota
 * counters read at scrape time. Refusals are counted by route, never by consumer: a consumer id
 * as a label would make one series per caller (the status page shows the top consumers instead).
 */
import type { Registry } from 'prom-client';
import { createSeriesHistogram } from '../series.js';
import { counters, LATENCY_BUCKETS, routeLabel, scraped } from './shared.js';
import type { MetricsModule, MetricsSources } from './types.js';

function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other';
}

// prettier-ignore
const SERIES = {
  aborted: ['portico_requests_aborted_total', 'Requests whose client left before the response ended', ['route']],
  gatewayErrors: ['portico_gateway_errors_total', 'Responses the gateway generated itself, by error code (X-Portico-Error)', ['code']],
  rateLimited: ['portico_rate_limited_total', 'Requests refused with 429 by the rate limiter, by route', ['route']],
  quotaExceeded: ['portico_quota_exceeded_total', 'Requests refused with 429 by a quota, by route', ['route']],
} as const;

export const requestMetrics: MetricsModule = (registry, sources) => {
  // The two per-request series are kept by series.ts (no prom-client work per request).
  const duration = createSeriesHistogram(registry, {
    name: 'portico_request_duration_seconds',
    help: 'Time from request to response end, by route template, method and status class',
    buckets: LATENCY_BUCKETS,
    counter: { name: 'portico_requests_total', help: 'Requests answered, by route template, method and status class' },
  });
  const { aborted, gatewayErrors, rateLimited, quotaExceeded } = counters(registry, SERIES);
  requestStateGauges(registry, sources);
  return {
    'request:end': (e) => {
      // Keyed by status class, not status: 200 and 204 are one series.
      const series = duration.seriesOf(
        e.status >= 100 && e.status < 600 ? (e.status / 100) | 0 : 0,
        e.method,
        e.routeId ?? '',
        () => ({ route: routeLabel(e.routeId), method: e.method, status_class: statusClass(e.status) }),
      );
      duration.observe(series, e.durationMs / 1000);
      if (e.aborted) aborted.inc({ route: routeLabel(e.routeId) });
      if (e.errorCode !== undefined) {
        gatewayErrors.inc({ code: e.errorCode });
        if (e.errorCode === 'GW_RATE_LIMITED') rateLimited.inc({ route: routeLabel(e.routeId) });
        else if (e.errorCode === 'GW_QUOTA_EXCEEDED') quotaExceeded.inc({ route: routeLabel(e.routeId) });
      }
    },
  };
};

/** Read at scrape time from the state their owners keep (no per-request cost). */
function requestStateGauges(registry: Registry, sources: MetricsSources): void {
  const { inFlight, rateLimitBuckets, quotaKeys } = sources;
  if (inFlight !== undefined)
    scraped(registry, [['portico_requests_in_flight', 'Requests being served now', () => inFlight.count, 'gauge']]);
  if (rateLimitBuckets !== undefined)
    scraped(registry, [
      ['portico_rate_limit_buckets', 'Client buckets held by the rate limiter', rateLimitBuckets, 'gauge'],
    ]);
  if (quotaKeys !== undefined)
    scraped(registry, [
      [
        'portico_quota_keys',
        'Callers whose quota this process counts locally (Redis counters excepted)',
        quotaKeys,
        'gauge',
      ],
    ]);
}
