/**
 * The one schema of a Portico configuration file. It types the parsed file, applies the defaults
 * of the spec (2.3-2.5) and DECISIONS.md, and is published as JSON Schema (schema/portico.schema.json)
 * for editors. Semantic rules the schema cannot express live in validate.ts.
 */
import { z } from 'zod';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** DECISIONS.md: identity headers removed from every client request before auth runs. */
export const DEFAULT_STRIP_HEADERS = ['X-userId', 'X-username', 'X-role', 'X-sub', 'X-email'];

const seconds = (d: string) => z.number().positive().describe(d);
const stringOrList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

export const MappingRuleSchema = z
  .strictObject({
    path: z.string().min(1).describe('Endpoint on the mapped service; {field} is replaced by the item field of that name'),
    service: z.string().min(1).describe('Host of the mapped service: host:port, http://host:port or https://host'),
    tag: z.string().min(1).describe('Key under which the mapped data is added to the item'),
    removeKeyMapping: z.boolean().default(false).describe('Remove the placeholder field from the item once the tag is set'),
  })
  .describe('A response-mapping rule');

export const RouteSchema = z
  .strictObject({
    method: z.enum(HTTP_METHODS).describe('HTTP method of the route'),
    route: z.string().describe('Gateway path under basePath; {param} segments are dynamic'),
    service: z.string().describe('Backend host: host:port, http://host:port or https://host'),
    path: z.string().describe('Backend path; may hold {param} placeholders and a query template'),
    public: z.boolean().default(false).describe('Skip authentication for this route'),
    isSSE: z.boolean().default(false).describe('Stream a Server-Sent Events response without buffering'),
    isWebSocket: z.boolean().default(false).describe('Tunnel a WebSocket connection to the backend'),
    mapping: z.array(MappingRuleSchema).optional().describe('Response-mapping rules'),
  })
  .describe('A gateway route');

export const AuthSchema = z.strictObject({
  authService: z.string().min(1).optional().describe('host:port of a delegated auth service; when set, secret and jwksUrl are ignored'),
  authPath: z.string().min(1).default('/auth/validate').describe('Validation endpoint on the auth service'),
  defaultProtected: z.boolean().default(false).describe('Every route requires a valid token unless it is public'),
  secret: z.string().min(1).optional().describe('HMAC secret for local JWT validation (HS256/384/512)'),
  jwksUrl: z.string().min(1).optional().describe('JWKS endpoint for RS*, PS*, ES* and EdDSA tokens'),
  issuer: stringOrList.optional().describe('Accepted "iss" value(s)'),
  audience: stringOrList.optional().describe('Accepted "aud" value(s)'),
  clockToleranceSec: z.number().min(0).default(0).describe('Leeway for exp and nbf'),
  stripHeaders: z
    .array(z.string().min(1))
    .default(DEFAULT_STRIP_HEADERS)
    .describe('Client headers removed before auth runs; a list here replaces the default list'),
});

export const CircuitBreakerSchema = z.strictObject({
  enabled: z.boolean().default(false),
  maxFailures: z.int().min(1).default(5).describe('Consecutive failures before the circuit opens'),
  timeoutSec: seconds('Seconds the circuit stays open before probing').default(30),
  halfOpenRequests: z.int().min(1).default(1).describe('Probe requests allowed while half-open'),
});

export const MappingCacheSchema = z.strictObject({
  enabled: z.boolean().default(false),
  ttlSec: seconds('Lifetime of a cached mapping response').default(60),
  maxSize: z.int().min(1).default(1000).describe('Entries kept; least recently used evicted first'),
});

export const RateLimitSchema = z.strictObject({
  enabled: z.boolean().default(false),
  requestsPerSec: z.number().positive().default(100),
  burst: z.number().positive().optional().describe('Bucket size; default 2 x requestsPerSec'),
});

export const TimeoutsSchema = z.strictObject({
  backendSec: seconds('No backend response headers within this time: 504').default(30),
  mappingSec: seconds('Per mapping call').default(10),
});

export const LimitsSchema = z.strictObject({
  maxMappingBodyBytes: z.int().positive().default(10 * 1024 * 1024).describe('Larger primary bodies are returned unmapped'),
  connectionsPerOrigin: z.int().positive().default(64).describe('Keep-alive connections per backend origin'),
});

export const GatewaySettingsSchema = z.strictObject({
  port: z.int().min(0).max(65535).default(8080),
  host: z.string().min(1).default('0.0.0.0'),
  basePath: z.string().default('/api').describe('Prefix of every gateway route'),
  auth: AuthSchema.prefault({}),
  circuitBreaker: CircuitBreakerSchema.prefault({}),
  mappingCache: MappingCacheSchema.prefault({}),
  rateLimit: RateLimitSchema.prefault({}),
  trustProxy: z.array(z.string().min(1)).default([]).describe('Proxies (addresses or CIDRs) whose X-Forwarded-For is believed'),
  timeouts: TimeoutsSchema.prefault({}),
  limits: LimitsSchema.prefault({}),
});

export const GatewayFileSchema = z
  .strictObject({
    routes: z.array(RouteSchema).describe('The gateway routes'),
    config: GatewaySettingsSchema.prefault({}),
  })
  .describe('Portico gateway configuration');

/** The file as written in YAML (before defaults). */
export type GatewayFileInput = z.input<typeof GatewayFileSchema>;
/** The file after validation, with every default applied. */
export type GatewayFile = z.output<typeof GatewayFileSchema>;
export type RouteConfig = z.output<typeof RouteSchema>;
export type MappingRuleConfig = z.output<typeof MappingRuleSchema>;
export type GatewaySettings = z.output<typeof GatewaySettingsSchema>;
export type AuthConfig = z.output<typeof AuthSchema>;
export type CircuitBreakerConfig = z.output<typeof CircuitBreakerSchema>;
export type MappingCacheConfig = z.output<typeof MappingCacheSchema>;
