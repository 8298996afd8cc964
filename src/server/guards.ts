/**
 * The operational layers every route starts with, decided once per configuration:
 *   CORS headers -> rate limit (429) -> body limits (413, 408) -> auth -> circuit -> endpoint.
 * CORS comes first so that a browser can read the gateway's own refusals; the cheap refusals
 * come before authentication so that abusive traffic costs no token check or auth-service call.
 * A route only gets the layers its configuration asks for.
 */
import type { CompiledConfig, CompiledRoute } from '../config/compile.js';
import type { Layer } from '../pipeline/step.js';
import { createClientIpResolver } from './client-ip.js';
import { compileCors, corsLayer } from './cors.js';
import { bodyLimitLayer } from './limits.js';
import { rateLimitLayer, routeRateLimit, type RateLimiter } from './rate-limit.js';

export type GuardLayers = (route: CompiledRoute) => Layer[];

/** Compiles the guards of a configuration; `rateLimiter` is the process-wide bucket store. */
export function createGuards(config: CompiledConfig, rateLimiter: RateLimiter): GuardLayers {
  const { settings } = config;
  const cors = compileCors(settings.cors);
  const clientIp = createClientIpResolver(settings.trustProxy);
  const bodyIdleMs = settings.timeouts.clientBodySec * 1000;
  return (route) => {
    const layers: Layer[] = [];
    if (cors !== undefined) layers.push(corsLayer(cors));
    const policy = routeRateLimit(route, settings.rateLimit);
    if (policy !== undefined) layers.push(rateLimitLayer(policy, rateLimiter, clientIp));
    // Upgrades never reach the pipeline; a plain request on a WebSocket route is answered 426.
    if (route.kind !== 'websocket') layers.push(bodyLimitLayer(route.maxBodyBytes, bodyIdleMs));
    return layers;
  };
}
