/**
 * A route's admission, rate limit and quota layers, and where they go in its pipeline (pipeline/build.ts):
 * before authentication when they count by address or header, so that abusive traffic costs no
 * token check; right after it when they count by consumer or claim, which only authentication
 * learns. On a route without authentication such a key reads nothing and the request is counted
 * by its address (layers/limit-key.ts), so the limit stays before. Decided once, at load.
 * Admission control (layers/admission.ts) comes first of all: past capacity its refusal must cost
 * almost nothing, not even a bucket in Redis.
 */
import type { CompiledRoute, Layer, PipelineConfig } from './types.js';
import { needsIdentity, type LimitKey } from '../config/syntax/limit-key.js';
import { compileRequestKey } from '../layers/limit-key.js';
import { rateLimitLayer, routeRateLimit, type RateLimitStore } from '../layers/rate-limit.js';
import { quotaLayer, routeQuota, type QuotaStore } from '../layers/quota.js';
import type { WindowClock } from '../layers/quota-windows.js';
import type { QuotaUsage } from '../layers/quota-usage.js';
import type { ClientIpResolver } from '../server/client-ip.js';
import { admissionLayer, routeAdmission } from '../layers/admission.js';
import type { AdmissionCounts } from '../layers/admission-counts.js';

/** What the limit layers of a configuration share (pipeline/build.ts's PipelineDeps has them all). */
export interface LimitDeps {
  readonly config: Pick<PipelineConfig, 'settings'>;
  readonly rateLimitStore: RateLimitStore;
  readonly quotaStore: QuotaStore;
  readonly quotaWindows: WindowClock;
  readonly clientIp: ClientIpResolver;
  readonly quotaUsage?: QuotaUsage | undefined;
  /** The process's requests in flight under admission control. */
  readonly admission: AdmissionCounts;
}

/** The route's limit layers (admission, rate limit, then quota), split by their place around auth. */
export function routeLimitLayers(
  route: CompiledRoute,
  deps: LimitDeps,
): { readonly beforeAuth: Layer[]; readonly afterAuth: Layer[] } {
  const { settings } = deps.config;
  const beforeAuth: Layer[] = [];
  const afterAuth: Layer[] = [];
  const admission = routeAdmission(route, settings.admission, deps.admission);
  if (admission !== undefined) beforeAuth.push(admissionLayer(admission));
  const place = (key: LimitKey) => (route.requiresAuth && needsIdentity(key) ? afterAuth : beforeAuth);
  // One set of buckets and counters for a route's requests and handshakes: opening sockets dodges no limit.
  const rateLimit = routeRateLimit(route, settings.rateLimit);
  if (rateLimit !== undefined) {
    const keyOf = compileRequestKey(rateLimit.key, deps.clientIp);
    place(rateLimit.key).push(rateLimitLayer(rateLimit, deps.rateLimitStore, keyOf, deps.quotaUsage?.rateLimited));
  }
  const quota = routeQuota(route, settings.quotas);
  if (quota !== undefined) {
    const layer = quotaLayer(quota, {
      store: deps.quotaStore,
      keyOf: compileRequestKey(quota.key, deps.clientIp),
      windows: deps.quotaWindows,
      observe: deps.quotaUsage?.observe,
    });
    place(quota.key).push(layer);
  }
  return { beforeAuth, afterAuth };
}
