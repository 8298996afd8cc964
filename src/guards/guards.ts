/**
 * The operational layers every route starts with, decided once per configuration:
 *   CORS headers -> rate limit (429) -> body limits (413, 408) -> auth -> circuit -> endpoint.
 * CORS comes first so that a browser can read the gateway's own refusals; the cheap refusals
 * come before authentication so that abusive traffic costs no token check or auth-service call.
 * A route only gets the layers its configuration asks for.
 *
 * WebSocket upgrades never reach a pipeline (Node hands over a raw socket), so their guards wrap
 * the upgrade endpoint instead: rate limit (429, the same process-wide buckets as HTTP requests)
 * -> Origin check when `config.cors` is set (403) -> the endpoint (auth, circuit, backend).
 */
import type { CompiledConfig, CompiledRoute } from '../config/compile.js';
import type { Layer } from '../pipeline/step.js';
import { answerError, type UpgradeStep } from '../stream/websocket.js';
import { createClientIpResolver } from '../server/client-ip.js';
import { corsLayer, type CorsPolicy } from './cors.js';
import { bodyLimitLayer } from '../server/limits.js';
import { rateLimitLayer, rateLimitedHeaders, routeRateLimit, type RateLimiter } from './rate-limit.js';

export interface GuardLayers {
  /** The guard layers of a route's HTTP pipeline. */
  (route: CompiledRoute): Layer[];
  /** A WebSocket route's upgrade endpoint behind the route's guards. */
  upgrade(route: CompiledRoute, endpoint: UpgradeStep): UpgradeStep;
}

/**
 * Compiles the guards of a configuration; `rateLimiter` is the process-wide bucket store, `cors`
 * the configuration's policy (undefined when CORS is off).
 */
export function createGuards(
  config: CompiledConfig,
  rateLimiter: RateLimiter,
  cors: CorsPolicy | undefined,
): GuardLayers {
  const { settings } = config;
  const clientIp = createClientIpResolver(settings.trustProxy);
  const bodyIdleMs = settings.timeouts.clientBodySec * 1000;
  const layers = (route: CompiledRoute): Layer[] => {
    const out: Layer[] = [];
    if (cors !== undefined) out.push(corsLayer(cors));
    const policy = routeRateLimit(route, settings.rateLimit);
    if (policy !== undefined) out.push(rateLimitLayer(policy, rateLimiter, clientIp));
    // Upgrades never reach the pipeline; a plain request on a WebSocket route is answered 426.
    if (route.kind !== 'websocket') out.push(bodyLimitLayer(route.maxBodyBytes, bodyIdleMs));
    return out;
  };
  const upgrade = (route: CompiledRoute, endpoint: UpgradeStep): UpgradeStep => {
    const policy = routeRateLimit(route, settings.rateLimit);
    if (policy === undefined && cors === undefined) return endpoint;
    return (ux) => {
      if (policy !== undefined) {
        const left = rateLimiter.take(policy.scope + clientIp(ux.req), policy);
        if (left < 0) {
          answerError(ux, 'GW_RATE_LIMITED', rateLimitedHeaders(policy, left));
          return Promise.resolve();
        }
      }
      if (cors !== undefined && !cors.allowsUpgrade(ux.req)) {
        answerError(ux, 'GW_ORIGIN_NOT_ALLOWED');
        return Promise.resolve();
      }
      return endpoint(ux);
    };
  };
  return Object.assign(layers, { upgrade });
}
