/**
 * The one schema of a Portico configuration file. It types the parsed file, applies the defaults
 * of docs/design-decisions.md "Configuration", and is published as JSON Schema (schema/portico.schema.json)
 * for editors. Semantic rules the schema cannot express live in settings-rules.ts and route-rules.ts.
 *
 * Each section is a module of schema/; this entry re-exports what the rest of the gateway uses.
 */
export { HTTP_METHODS, type HttpMethod } from './schema/primitives.js';
export { DEFAULT_STRIP_HEADERS, AuthSchema } from './schema/auth.js';
export { MappingRuleSchema, RequireSchema, FieldRulesShape, AggregateBackendSchema } from './schema/route-parts.js';
export { RouteSchema, type RouteConfig } from './schema/route.js';
export { CircuitBreakerSchema } from './schema/circuit-breaker.js';
export { MappingCacheSchema, type MappingCacheConfig } from './schema/mapping-cache.js';
export { RateLimitSchema, type RateLimitConfig } from './schema/rate-limit.js';
export {
  QuotasSchema,
  QUOTA_REDIS_TIMEOUT_MS,
  QUOTA_WINDOWS,
  type QuotaWindow,
  type QuotasConfig,
  type QuotaLimits,
  type RouteQuotaConfig,
} from './schema/quotas.js';
export type { AdmissionConfig } from './schema/admission.js';
export { RedisSchema } from './schema/redis.js';
export { TimeoutsSchema } from './schema/timeouts.js';
export { LimitsSchema } from './schema/limits.js';
export { UpstreamTlsSchema, TlsSchema } from './schema/tls.js';
export { IpRulesSchema, type IpRulesConfig } from './schema/ip-rules.js';
export { CorsSchema, type CorsConfig } from './schema/cors.js';
export {
  CacheSchema,
  RouteCacheSchema,
  type CacheConfig,
  type RouteCacheConfig,
  type RouteCacheSpec,
  type SharedCacheSettings,
  sharedCacheSettings,
} from './schema/cache.js';
export {
  CompressionSchema,
  COMPRESSION_ALGORITHMS,
  type CompressionAlgorithm,
  type CompressionConfig,
} from './schema/compression.js';
export { TelemetrySchema } from './schema/telemetry.js';
export { AdminSchema, type AdminConfig } from './schema/admin.js';
export { Http2Schema } from './schema/http2.js';
export { ShutdownSchema } from './schema/shutdown.js';
export { GatewaySettingsSchema, type GatewaySettings } from './schema/settings.js';
export { UpstreamSchema, type UpstreamConfig } from './schema/upstream.js';
export { ConsumerSchema, ConsumersFileSchema, KEY_HASH, type ConsumerConfig } from './schema/consumers.js';
export { GatewayFileSchema, type GatewayFile } from './schema/gateway-file.js';
export type { PluginSpec } from './schema/plugins.js';
export type { TracingSettings } from './schema/telemetry.js';
