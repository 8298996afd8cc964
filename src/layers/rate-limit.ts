/**
 * Rate limiting (docs/design-decisions.md `config.rateLimit`): a token bucket per client IP, or per
 * consumer, claim or header (`rateLimit.key`, limit-key.ts).
 *
 * Design note. A bucket holds up to `burst` tokens and refills at `requestsPerSec`; a request
 * takes one token or is answered 429. Buckets live in an LRU with a TTL equal to the time a
 * bucket needs to refill completely: an expired bucket would be full again anyway, so forgetting
 * it changes nothing, and memory stays bounded by `maxClients` whatever the traffic. The limiter
 * is made once per process, so buckets survive reloads (docs/design-decisions.md); a reload that changes the
 * numbers applies them to existing buckets on their next request.
 *
 * A route may have its own buckets (`routes[].rateLimit`) or be exempt (`enabled: false`); other
 * routes share one bucket per client when `config.rateLimit.enabled`.
 *
 * The buckets here are the local store; `rateLimit.store: redis` puts them in Redis, shared by
 * every replica (redis-rate-limit.ts), with these as the fallback while Redis cannot answer.
 */
import { LRUCache } from 'lru-cache';
import type { CompiledRoute, Exchange, Layer } from '../pipeline/types.js';
import type { RateLimitConfig } from '../config/schema.js';
import { sendError } from '../response/send-error.js';
import { parseLimitKey, type LimitKey } from '../config/syntax/limit-key.js';
import type { RequestKey } from './limit-key.js';

export interface RateLimitPolicy {
  /** Bucket namespace: '' for the shared limit, the route id for a route's own. */
  readonly scope: string;
  readonly requestsPerSec: number;
  readonly burst: number;
  /** What the buckets count by (`rateLimit.key`). */
  readonly key: LimitKey;
}

/** What a store needs of a policy to take a token: the bucket's size and refill rate. */
export type BucketNumbers = Pick<RateLimitPolicy, 'requestsPerSec' | 'burst'>;

/** The policy of a route, or undefined when the route is not limited. Decided at config load. */
export function routeRateLimit(
  route: Pick<CompiledRoute, 'id' | 'rateLimit'>,
  settings: RateLimitConfig,
): RateLimitPolicy | undefined {
  const own = route.rateLimit;
  if (own?.enabled === false) return undefined;
  const key = parseLimitKey(own?.key ?? settings.key);
  if (own !== undefined && (own.requestsPerSec !== undefined || own.burst !== undefined)) {
    const requestsPerSec = own.requestsPerSec ?? settings.requestsPerSec;
    return { scope: `${route.id}\n`, requestsPerSec, burst: own.burst ?? 2 * requestsPerSec, key };
  }
  if (!settings.enabled && own === undefined) return undefined;
  // A route that opts in without numbers uses the shared numbers; its own buckets when the shared
  // limit is off (so it does not share with nobody under a misleading scope).
  return {
    scope: settings.enabled ? '' : `${route.id}\n`,
    requestsPerSec: settings.requestsPerSec,
    burst: settings.burst ?? 2 * settings.requestsPerSec,
    key,
  };
}

interface Bucket {
  tokens: number;
  /** Clock reading (ms) of the last refill. */
  at: number;
}

/** Where buckets live: this process (RateLimiter) or Redis, shared by every replica (redis-rate-limit.ts). */
export interface RateLimitStore {
  /**
   * Takes a token from `key`'s bucket. Returns the tokens left (>= 0) when allowed, or a
   * negative number when refused: minus the tokens still missing before one is available.
   * The local store answers at once; a shared store after its round trip.
   */
  take(key: string, policy: BucketNumbers): number | Promise<number>;
}

/** The process's own buckets. */
export interface RateLimiter extends RateLimitStore {
  take(key: string, policy: BucketNumbers): number;
  /** Buckets currently held (for tests and metrics). */
  readonly size: number;
}

export interface RateLimiterOptions {
  /** Most buckets kept; least recently used are forgotten first. */
  readonly maxClients?: number;
  /** Milliseconds clock (injected in tests). */
  readonly now?: () => number;
}

/** The process-wide bucket store. */
export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const now = options.now ?? (() => performance.now());
  // Made on the first request that is limited: lru-cache allocates its arrays for `max` entries up
  // front (~2.5 MB for 100,000), which a configuration without rate limits should not pay.
  let buckets: LRUCache<string, Bucket> | undefined;
  return {
    take(key, policy) {
      buckets ??= new LRUCache<string, Bucket>({
        max: options.maxClients ?? 100_000,
        updateAgeOnGet: true,
        perf: { now },
      });
      const t = now();
      const { requestsPerSec: rate, burst } = policy;
      let b = buckets.get(key);
      if (b === undefined) {
        b = { tokens: burst, at: t };
        buckets.set(key, b, { ttl: Math.ceil((burst / rate) * 1000) });
      } else {
        b.tokens = Math.min(burst, b.tokens + ((t - b.at) * rate) / 1000);
        b.at = t;
      }
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return b.tokens;
      }
      return b.tokens - 1;
    },
    get size() {
      return buckets?.size ?? 0;
    },
  };
}

/**
 * Refuses requests over the limit with 429 `GW_RATE_LIMITED` and `Retry-After`. Every answer
 * carries the `RateLimit-Policy` and `RateLimit` fields of draft-ietf-httpapi-ratelimit-headers-11
 * (policy `"burst"`: `q` the bucket size, `w` the seconds it takes to refill from empty; `r` the
 * tokens left, `t` the seconds until the bucket is full, or until a token is back on a 429), and
 * for clients written against the older drafts (-06 and before) `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset`.
 */
export function rateLimitLayer(
  policy: RateLimitPolicy,
  store: RateLimitStore,
  keyOf: RequestKey,
  /** Told of each refusal, with the bucket's key (the status page's callers, quota-usage.ts). */
  onRefused?: (key: string) => void,
): Layer {
  const { scope, requestsPerSec: rate, burst } = policy;
  const limit = String(Math.floor(burst));
  const policyField = burstPolicyField(policy);
  return (next) => {
    const decide = (ex: Exchange, key: string, left: number): Promise<void> => {
      if (left >= 0) {
        const res = ex.res;
        const reset = Math.ceil((burst - left) / rate);
        res.setHeader('ratelimit-policy', policyField);
        res.setHeader('ratelimit', `"burst";r=${Math.floor(left)};t=${reset}`);
        res.setHeader('ratelimit-limit', limit);
        res.setHeader('ratelimit-remaining', Math.floor(left));
        res.setHeader('ratelimit-reset', reset);
        return next(ex);
      }
      ex.errorCode = 'GW_RATE_LIMITED';
      onRefused?.(key);
      sendError(ex.res, 'GW_RATE_LIMITED', rateLimitedHeaders(policy, left));
      return Promise.resolve();
    };
    return (ex) => {
      const key = scope + keyOf(ex);
      const left = store.take(key, policy);
      return typeof left === 'number' ? decide(ex, key, left) : left.then((l) => decide(ex, key, l));
    };
  };
}

/** The `RateLimit-Policy` item of a token bucket: `q` tokens, refilled from empty in `w` seconds. */
function burstPolicyField(policy: Pick<RateLimitPolicy, 'burst' | 'requestsPerSec'>): string {
  const { burst, requestsPerSec: rate } = policy;
  return `"burst";q=${Math.floor(burst)};w=${Math.max(1, Math.ceil(burst / rate))}`;
}

/** The headers of a 429: `Retry-After` and the RateLimit fields, from `take`'s negative answer `left`. */
export function rateLimitedHeaders(
  policy: Pick<RateLimitPolicy, 'burst' | 'requestsPerSec'>,
  left: number,
): Record<string, string> {
  const { requestsPerSec: rate, burst } = policy;
  const retryAfter = String(Math.max(1, Math.ceil(-left / rate)));
  return {
    'retry-after': retryAfter,
    'ratelimit-policy': burstPolicyField(policy),
    // The draft asks `t` and Retry-After to name the same moment on a refusal.
    ratelimit: `"burst";r=0;t=${retryAfter}`,
    'ratelimit-limit': String(Math.floor(burst)),
    'ratelimit-remaining': '0',
    'ratelimit-reset': String(Math.ceil((burst - (left + 1)) / rate)),
  };
}
