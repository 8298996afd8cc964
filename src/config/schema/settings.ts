/** The `config` object: settings of the whole gateway, one key per section. */
import { z } from 'zod';
import { AdminSchema } from './admin.js';
import { AdmissionSchema } from './admission.js';
import { AuthSchema } from './auth.js';
import { CircuitBreakerSchema } from './circuit-breaker.js';
import { CacheSchema } from './cache.js';
import { CompressionSchema } from './compression.js';
import { CorsSchema } from './cors.js';
import { Http2Schema } from './http2.js';
import { IpRulesSchema } from './ip-rules.js';
import { LimitsSchema } from './limits.js';
import { MappingCacheSchema } from './mapping-cache.js';
import { seconds } from './primitives.js';
import { RateLimitSchema } from './rate-limit.js';
import { QuotasSchema } from './quotas.js';
import { RedisSchema } from './redis.js';
import { ShutdownSchema } from './shutdown.js';
import { TelemetrySchema } from './telemetry.js';
import { TimeoutsSchema } from './timeouts.js';
import { TlsSchema, UpstreamTlsSchema } from './tls.js';
import { PluginNameSchema } from './plugins.js';

export const GatewaySettingsSchema = z.strictObject({
  port: z.int().min(0).max(65535).default(8080).describe('Listen port; --port and $PORT override it'),
  host: z.string().min(1).default('0.0.0.0').describe('Listen address; --host overrides it'),
  basePath: z.string().default('/api').describe('Prefix of every gateway route; "" for none'),
  auth: AuthSchema.prefault({}).describe(
    'Token validation: local JWT (secret), JWKS (jwksUrl), a delegated auth service or OAuth2 token introspection',
  ),
  consumersFile: z
    .string()
    .min(1)
    .optional()
    .describe(
      'A YAML file holding the consumers: list, relative to this file; reloaded on its own when it changes (docs/consumers.md)',
    ),
  circuitBreaker: CircuitBreakerSchema.prefault({}).describe('One circuit breaker per backend origin'),
  mappingCache: MappingCacheSchema.prefault({}).describe('LRU cache of mapping responses, with a lifetime'),
  rateLimit: RateLimitSchema.prefault({}).describe('Default rate limit: a token bucket per client IP'),
  quotas: QuotasSchema.optional().describe(
    'Request quotas per consumer over calendar windows (minute, hour, day, month, UTC), with limits per plan (docs/consumers.md#quotas); off unless present',
  ),
  redis: RedisSchema.optional().describe(
    'Redis shared by every replica for rateLimit.store and mappingCache.store: redis (docs/redis.md)',
  ),
  admission: AdmissionSchema.prefault({}).describe(
    'Admission control: limits on requests in flight, answered 503 GW_OVERLOADED past them (docs/overload.md); off unless maxInFlight is set',
  ),
  trustProxy: z
    .array(z.string().min(1))
    .default([])
    .describe(
      'Proxies (addresses, CIDRs, or loopback, private, linklocal) whose X-Forwarded-For is believed, and extended; from anyone else it is replaced, and Forwarded / X-Real-IP are dropped',
    ),
  ipRules: IpRulesSchema.optional().describe(
    'Client addresses let in or refused on every route without ipRules of its own (docs/security.md); trustProxy decides the address',
  ),
  timeouts: TimeoutsSchema.prefault({}).describe('Deadlines for clients, backends and mapping calls, in seconds'),
  limits: LimitsSchema.prefault({}).describe('Sizes: request heads and bodies, mapped bodies, connections per backend'),
  cors: CorsSchema.optional().describe('Cross-origin resource sharing, answered by the gateway; off unless present'),
  admin: AdminSchema.optional().describe(
    'The admin listener: a read-only status page and JSON API on its own port (docs/dashboard.md); off unless present',
  ),
  cache: CacheSchema.prefault({}).describe(
    'The shared HTTP cache of routes with cache: (RFC 9111): its size and heuristic freshness (docs/caching.md)',
  ),
  compression: CompressionSchema.prefault({}).describe(
    'Response compression (gzip, br, zstd) for clients that accept it; off unless enabled (docs/compression.md)',
  ),
  telemetry: TelemetrySchema.prefault({}).describe('Metrics, trace propagation and span export'),
  upstreamTls: UpstreamTlsSchema.prefault({}).describe(
    'TLS to https:// backends: trusted CAs, verification, the client certificate (docs/upstreams.md)',
  ),
  tls: TlsSchema.optional().describe('TLS on the listener: HTTPS with these certificates (docs/tls.md)'),
  http2: Http2Schema.prefault({}).describe('HTTP/2 on the listener (docs/tls.md): h2 over TLS, h2c by prior knowledge'),
  shutdown: ShutdownSchema.prefault({}).describe(
    'Stopping on SIGTERM: the drain delay for rolling restarts (docs/deploy.md)',
  ),
  plugins: z
    .array(PluginNameSchema)
    .default([])
    .describe("Plugins (from the top-level plugins: list) that run on every route, before the route's own"),
  // tainha-gateway keys, accepted under their own names with the same meaning.
  readTimeoutSec: seconds(
    'The whole request (head and body) must arrive within this time, else 408; default none (tainha-gateway)',
  ).optional(),
  writeTimeoutSec: seconds(
    'A client that takes none of a waiting response for this long is disconnected; idle or flowing streams (SSE, WebSocket) are never cut; default none (tainha-gateway)',
  ).optional(),
  idleTimeoutSec: seconds(
    'Another name for timeouts.keepAliveSec (tainha-gateway); setting both is an error',
  ).optional(),
});

export type GatewaySettings = z.output<typeof GatewaySettingsSchema>;
