/**
 * Semantic checks of the operational keys that the schema cannot express: trusted
 * proxies, CORS, rate-limit buckets that could never admit a request, quotas that limit nothing, the OTLP endpoint, the
 * Redis URL and the stores that need it.
 */
import type { ConfigPath } from './parse.js';
import { isRecord } from './raw-value.js';
import { trustEntryProblem } from './syntax/trust-proxy.js';
import { corsOriginProblem } from './syntax/cors-origin.js';
import { redisUrlProblem } from './syntax/redis-url.js';
import { cidrProblem } from './syntax/cidr.js';

type At = (path: ConfigPath, message: string, hint?: string) => void;

function checkBurst(rateLimit: unknown, path: ConfigPath, label: string, at: At): void {
  if (!isRecord(rateLimit)) return;
  if (typeof rateLimit.burst === 'number' && rateLimit.burst < 1)
    at([...path, 'burst'], `${label}.burst: must be at least 1, else no request is ever admitted`);
  else if (
    rateLimit.burst === undefined &&
    typeof rateLimit.requestsPerSec === 'number' &&
    rateLimit.requestsPerSec < 0.5
  ) {
    at(
      [...path, 'requestsPerSec'],
      `${label}.requestsPerSec: below 0.5 the default burst (2 x requestsPerSec) is under 1; set burst`,
    );
  }
}

const WINDOWS = ['minute', 'hour', 'day', 'month'] as const;
const hasWindow = (limits: Record<string, unknown>) => WINDOWS.some((w) => limits[w] !== undefined);

/** A quota must limit something: each plan a window, the section a window or a plan. */
function checkQuota(quota: unknown, path: ConfigPath, label: string, shared: boolean, at: At): void {
  if (!isRecord(quota) || quota.enabled === false) return;
  const plans = isRecord(quota.plans) ? quota.plans : {};
  for (const [name, limits] of Object.entries(plans))
    if (isRecord(limits) && !hasWindow(limits))
      at([...path, 'plans', name], `${label}.plans.${name}: limits nothing; give minute, hour, day or month`);
  if (!hasWindow(quota) && Object.keys(plans).length === 0 && !shared)
    at(
      path,
      `${label}: limits nothing; give minute, hour, day or month, or plans${label === 'config.quotas' ? '' : ', or set config.quotas'}`,
    );
}

/** `config.redis.url` must be usable, and a `store: redis` needs `config.redis`. */
function checkRedis(config: Record<string, unknown>, at: At): void {
  const redis = isRecord(config.redis) ? config.redis : undefined;
  const problem = typeof redis?.url === 'string' ? redisUrlProblem(redis.url) : undefined;
  if (problem !== undefined) at(['config', 'redis', 'url'], `config.redis.url: ${problem}`);
  for (const key of ['rateLimit', 'mappingCache', 'quotas'] as const) {
    const section = config[key];
    if (redis === undefined && isRecord(section) && section.store === 'redis')
      at(
        ['config', key, 'store'],
        `config.${key}.store: redis needs config.redis (its url at least)`,
        'add config.redis: { url: redis://host:6379 }, or set store: local',
      );
  }
  const cache = isRecord(config.cache) ? config.cache : undefined;
  const shared = cache?.redis === true || (isRecord(cache?.redis) && cache.redis.enabled !== false);
  if (redis === undefined && shared)
    at(
      ['config', 'cache', 'redis'],
      'config.cache.redis: the shared level needs config.redis (its url at least)',
      'add config.redis: { url: redis://host:6379 }, or set cache.redis: false',
    );
}

/** Every entry of an `ipRules` section (`allow`, `deny`) must be an address or a CIDR. */
function checkIpRules(rules: unknown, path: ConfigPath, label: string, at: At): void {
  if (!isRecord(rules)) return;
  for (const list of ['allow', 'deny'] as const) {
    const entries = rules[list];
    if (!Array.isArray(entries)) continue;
    entries.forEach((entry: unknown, i: number) => {
      const problem = typeof entry === 'string' ? cidrProblem(entry) : undefined;
      if (problem !== undefined) at([...path, list, i], `${label}.${list}[${i}]: ${problem}`);
    });
  }
}

/** Reports every problem of `config.trustProxy`, `config.ipRules`, `config.cors`, `config.rateLimit`, `routes[].rateLimit`, `routes[].ipRules`, `config.quotas`, `routes[].quota`, `config.telemetry`, `config.redis`. */
export function operationsChecks(config: Record<string, unknown>, routes: unknown, at: At): void {
  if (Array.isArray(config.trustProxy)) {
    config.trustProxy.forEach((entry: unknown, i: number) => {
      const problem = typeof entry === 'string' ? trustEntryProblem(entry) : undefined;
      if (problem !== undefined) at(['config', 'trustProxy', i], `config.trustProxy[${i}]: ${problem}`);
    });
  }

  if (isRecord(config.cors)) {
    const cors = config.cors;
    if (cors.origins === '*' && cors.credentials === true) {
      at(
        ['config', 'cors', 'credentials'],
        'config.cors: origins "*" cannot be combined with credentials: true (browsers refuse it); list the allowed origins',
      );
    }
    if (Array.isArray(cors.origins)) {
      cors.origins.forEach((origin: unknown, i: number) => {
        const problem = typeof origin === 'string' && origin !== '*' ? corsOriginProblem(origin) : undefined;
        if (problem !== undefined) at(['config', 'cors', 'origins', i], `config.cors.origins[${i}]: ${problem}`);
        if (origin === '*')
          at(
            ['config', 'cors', 'origins', i],
            `config.cors.origins[${i}]: write origins: "*" instead of a list holding "*"`,
          );
      });
    }
  }

  checkBurst(config.rateLimit, ['config', 'rateLimit'], 'config.rateLimit', at);
  checkIpRules(config.ipRules, ['config', 'ipRules'], 'config.ipRules', at);
  if (Array.isArray(routes))
    routes.forEach((r: unknown, i: number) => {
      if (!isRecord(r)) return;
      checkBurst(r.rateLimit, ['routes', i, 'rateLimit'], `routes[${i}].rateLimit`, at);
      checkIpRules(r.ipRules, ['routes', i, 'ipRules'], `routes[${i}].ipRules`, at);
    });

  checkQuota(config.quotas, ['config', 'quotas'], 'config.quotas', false, at);
  if (Array.isArray(routes))
    routes.forEach(
      (r: unknown, i: number) =>
        isRecord(r) && checkQuota(r.quota, ['routes', i, 'quota'], `routes[${i}].quota`, isRecord(config.quotas), at),
    );

  checkRedis(config, at);

  const telemetry = isRecord(config.telemetry) ? config.telemetry : {};
  if (typeof telemetry.otlpEndpoint === 'string' && !/^https?:\/\/[^/]/i.test(telemetry.otlpEndpoint)) {
    at(
      ['config', 'telemetry', 'otlpEndpoint'],
      `config.telemetry.otlpEndpoint: "${telemetry.otlpEndpoint}" must be an http:// or https:// URL (OTLP/HTTP, e.g. http://otel-collector:4318)`,
    );
  }
  if (telemetry.metricsPublic === true && telemetry.metricsToken !== undefined)
    at(
      ['config', 'telemetry', 'metricsPublic'],
      'config.telemetry.metricsPublic: true serves /metrics to any client, metricsToken to its bearers only; keep one',
    );
}
