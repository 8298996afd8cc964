/**
 * The one schema of a Portico configuration file. It types the parsed file, applies the defaults
 * of docs/design-decisions.md "Configuration", and is published as JSON Schema (schema/portico.schema.json)
 * for editors. Semantic rules the schema cannot express live in settings-rules.ts and route-rules.ts.
 */
import { z } from 'zod';
import { HEADER_NAME } from '../upstream/header-edits.js';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** Identity headers removed from every client request before auth runs. */
export const DEFAULT_STRIP_HEADERS = ['X-userId', 'X-username', 'X-role', 'X-sub', 'X-email'];

const seconds = (d: string) => z.number().positive().describe(d);
const stringOrList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

export const MappingRuleSchema = z
  .strictObject({
    path: z
      .string()
      .min(1)
      .describe('Endpoint on the mapped service; {field} is replaced by the item field of that name'),
    service: z.string().min(1).describe('Host of the mapped service: host:port, http://host:port or https://host'),
    tag: z.string().min(1).describe('Key under which the mapped data is added to the item'),
    removeKeyMapping: z
      .boolean()
      .default(false)
      .describe('Remove the placeholder field from the item once the tag is set'),
    batch: z
      .strictObject({
        path: z
          .string()
          .min(1)
          .describe(
            'Batch endpoint on the same service; {values} is replaced by the distinct values, percent-encoded and joined by separator',
          ),
        separator: z.string().min(1).default(',').describe('Text between two values in {values}, sent as written'),
        key: z.string().min(1).default('id').describe('Field of each object of an array answer that holds its value'),
        max: z.int().min(1).max(1000).default(100).describe('Most values in one batch call'),
      })
      .optional()
      .describe(
        "Ask for the rule's values in batches instead of one call per value (path then names the field and the cache key)",
      ),
  })
  .describe('A response-mapping rule');

const claimValue = z.union([z.string(), z.number(), z.boolean()]);

export const RequireSchema = z
  .strictObject({
    roles: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe('The token holds at least one of these roles (claim auth.rolesClaim, else roles, then role)'),
    scopes: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe('The token holds every one of these scopes (claim scope or scp, space-separated or a list)'),
    claims: z
      .record(z.string().min(1), z.union([claimValue, z.array(claimValue).min(1)]))
      .optional()
      .describe('Each claim equals this value, or one of a list of values (name as written, else a dot path)'),
  })
  .describe('Authorization rules a valid token must meet on this route');

const fieldPath = z.string().min(1);
export const FieldRulesShape = {
  allow: z
    .array(fieldPath)
    .min(1)
    .optional()
    .describe('Keep only these fields of the JSON answer (dot paths reach into nested objects and arrays of objects)'),
  deny: z.array(fieldPath).min(1).optional().describe('Drop these fields of the JSON answer (dot paths as in allow)'),
  rename: z
    .record(z.string().min(1), z.string().min(1))
    .optional()
    .describe('Rename top-level fields of the JSON answer: old name -> new name (after allow/deny)'),
};

export const AggregateBackendSchema = z
  .strictObject({
    service: z.string().describe('Backend: host:port, http://host:port or https://host'),
    path: z.string().describe("Backend path; may hold the route's {param}s and a query template, as a route's path"),
    group: z.string().min(1).optional().describe('Nest this answer under this key of the merged object'),
    target: z
      .string()
      .min(1)
      .optional()
      .describe('Take only this field of the answer (a dot path), before allow/deny/rename and group'),
    ...FieldRulesShape,
  })
  .describe('One backend of an aggregated route');

const HeaderEditSchema = z.strictObject({
  set: z
    .record(z.string().min(1), z.string())
    .optional()
    .describe('Headers set, replacing any of the same name; values may hold {param} and {claims.NAME}'),
  remove: z.array(z.string().min(1)).optional().describe('Headers removed (case-insensitive names)'),
});

export const RouteSchema = z
  .strictObject({
    method: z
      .enum(HTTP_METHODS)
      .describe('HTTP method. A GET route also answers HEAD unless a HEAD route is configured for the same path'),
    route: z
      .string()
      .describe(
        'Gateway path under basePath; {param} segments are dynamic, several per route allowed (/a/{x}/b/{y}, /files/{name}.{ext}). A {param} ends at /, . or -; *, (, ), ? and # are refused',
      ),
    service: z
      .string()
      .optional()
      .describe(
        'Backend: host:port, http://host:port or https://host; http:// when no scheme. A host only: a path here is an error. Required unless the route has backends',
      ),
    path: z
      .string()
      .optional()
      .describe(
        'Backend path. May hold {param}s and a query template (/users?companyId={companyId}). Every parameter must appear in both route and path. Required unless the route has backends',
      ),
    backends: z
      .array(AggregateBackendSchema)
      .min(1)
      .optional()
      .describe(
        'Aggregation, instead of service and path: GET these backends concurrently and merge their JSON answers into one object (docs/aggregation.md)',
      ),
    public: z.boolean().default(false).describe('Skip authentication for this route'),
    protected: z
      .boolean()
      .optional()
      .describe('Require a valid token on this route even when auth.defaultProtected is false'),
    require: RequireSchema.optional().describe(
      "Authorization rules on the token's claims: 403 when a valid token lacks them (implies protected)",
    ),
    isSSE: z.boolean().default(false).describe('Stream a Server-Sent Events response without buffering'),
    isWebSocket: z
      .boolean()
      .default(false)
      .describe('Tunnel a WebSocket connection to the backend (the method must be GET)'),
    mapping: z
      .array(MappingRuleSchema)
      .optional()
      .describe('Response-mapping rules: enrich each item of a JSON response with data from other services'),
    maxBodyBytes: z
      .int()
      .positive()
      .optional()
      .describe('Largest request body for this route, else 413; default config.limits.maxBodyBytes'),
    retries: z
      .int()
      .min(0)
      .max(5)
      .default(1)
      .describe(
        'On a named upstream: tries on another target after a connection failure, a reset before any answer, or a 502/503 (idempotent methods only unless retryNonIdempotent)',
      ),
    retryNonIdempotent: z
      .boolean()
      .default(false)
      .describe('Let a POST or PATCH be retried too (only when a retry cannot do the work twice)'),
    timeouts: z
      .strictObject({
        backendSec: seconds('No backend response headers within this time: 504').optional(),
        backendIdleSec: z
          .number()
          .min(0)
          .optional()
          .describe('Longest silence between two backend body chunks; 0 for none'),
        mappingSec: seconds('Per mapping call, counted once it has a connection').optional(),
      })
      .optional()
      .describe("This route's own backend deadlines, each overriding config.timeouts"),
    request: z
      .strictObject({
        schema: z
          .union([z.string().min(1), z.record(z.string(), z.unknown())])
          .describe(
            'JSON Schema of the request body: a .json file (relative to this config file) or inline; draft-07, or 2020-12 by $schema',
          ),
        maxBytes: z
          .int()
          .positive()
          .default(1024 * 1024)
          .describe('Largest body validated (kept in memory to be parsed); larger: 413'),
      })
      .optional()
      .describe(
        'Request validation: the JSON body is checked against a schema before the backend is called (400, 415)',
      ),
    headers: z
      .strictObject({
        request: HeaderEditSchema.optional().describe('Edits of the headers sent to the backend'),
        response: HeaderEditSchema.optional().describe('Edits of the backend response headers sent to the client'),
      })
      .optional()
      .describe('Header rules: headers set and removed on the way to the backend and back (docs/header-rules.md)'),
    response: z
      .strictObject(FieldRulesShape)
      .optional()
      .describe(
        'Field filtering of a JSON answer (an object or an array of objects, 2xx, up to limits.maxMappingBodyBytes); other answers pass untouched',
      ),
    requestBuffering: z
      .boolean()
      .default(true)
      .describe(
        'Read the whole request body before calling the backend (false: stream it as it arrives, for uploads that must start at once)',
      ),
    rateLimit: z
      .strictObject({
        enabled: z.boolean().default(true).describe('false exempts this route from config.rateLimit'),
        requestsPerSec: z
          .number()
          .positive()
          .optional()
          .describe("This route's own rate per client IP; default config.rateLimit.requestsPerSec"),
        burst: z.number().positive().optional().describe("This route's own bucket size; default 2 x requestsPerSec"),
      })
      .optional()
      .describe('Per-route rate limit: its own token bucket per client IP, or enabled: false to exempt the route'),
  })
  .describe('A gateway route');

export const AuthSchema = z.strictObject({
  authService: z
    .string()
    .min(1)
    .optional()
    .describe('Delegated auth service (host:port); takes priority over jwksUrl, then secret, which are then ignored'),
  authPath: z.string().min(1).default('/auth/validate').describe('Validation endpoint on the auth service'),
  defaultProtected: z.boolean().default(false).describe('Every route requires a valid token unless it is public'),
  tokenFrom: z
    .array(
      z.union([
        z.literal('header'),
        z.strictObject({ cookie: z.string().min(1).describe('Cookie name') }),
        z.strictObject({ query: z.string().min(1).describe('Query parameter name') }),
      ]),
    )
    .min(1)
    .default(['header'])
    .describe(
      'Where protected routes find the token, in order: header (Authorization: Bearer), {cookie: NAME}, {query: NAME}; query tokens are removed before forwarding',
    ),
  rolesClaim: z
    .string()
    .min(1)
    .optional()
    .describe('Claim holding the roles that require.roles checks (a name, else a dot path); default roles, then role'),
  secret: z.string().min(1).optional().describe('HMAC secret for local JWT validation (HS256/384/512)'),
  jwksUrl: z.string().min(1).optional().describe('JWKS endpoint for RS*, PS*, ES* and EdDSA tokens'),
  issuer: stringOrList.optional().describe('Accepted "iss" value(s), checked when set (local JWT and JWKS modes)'),
  audience: stringOrList.optional().describe('Accepted "aud" value(s), checked when set (local JWT and JWKS modes)'),
  clockToleranceSec: z.number().min(0).default(0).describe('Leeway in seconds for exp and nbf'),
  jwksCooldownSec: z
    .number()
    .min(0)
    .default(30)
    .describe('Minimum seconds between two JWKS refetches caused by a token with an unknown kid'),
  stripHeaders: z
    .array(z.string().min(1))
    .default(DEFAULT_STRIP_HEADERS)
    .describe('Client headers removed before auth runs; a list here replaces the default list'),
});

export const CircuitBreakerSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe('One circuit per backend origin (scheme://host:port); false: no circuit at all'),
  maxFailures: z.int().min(1).default(5).describe('Consecutive failures before the circuit opens'),
  timeoutSec: seconds('Seconds the circuit stays open before probing').default(30),
  halfOpenRequests: z.int().min(1).default(1).describe('Probe requests allowed while half-open'),
});

export const MappingCacheSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe('Cache successful mapping responses by URL, shared by every route and client'),
  ttlSec: seconds('Lifetime of a cached mapping response, counted from its fetch').default(60),
  maxSize: z.int().min(1).default(1000).describe('Entries kept; least recently used evicted first'),
  store: z
    .enum(['local', 'redis'])
    .default('local')
    .describe(
      'local: each process keeps its own cache; redis: a second level in config.redis, shared by every replica',
    ),
});

export const RateLimitSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe('A token bucket per client IP, shared by the routes without their own rateLimit'),
  requestsPerSec: z.number().positive().default(100).describe('Refill rate: requests per second per client IP'),
  burst: z.number().positive().optional().describe('Bucket size; default 2 x requestsPerSec'),
  store: z
    .enum(['local', 'redis'])
    .default('local')
    .describe(
      'local: each process keeps its own buckets; redis: the buckets live in config.redis, shared by every replica',
    ),
});

export const RedisSchema = z.strictObject({
  url: z
    .string()
    .min(1)
    .describe('redis://[user:password@]host:port[/db], or rediss:// for TLS; write the password as ${REDIS_PASSWORD}'),
  keyPrefix: z
    .string()
    .default('portico:')
    .describe('Put before every key the gateway writes, so several gateways or programs can share one Redis'),
  connectTimeoutMs: z.int().positive().default(1000).describe('Longest wait for a connection to Redis'),
  commandTimeoutMs: z
    .int()
    .positive()
    .default(50)
    .describe(
      'Longest wait for one Redis answer; past it the request decides locally (local buckets, no shared cache)',
    ),
  required: z
    .boolean()
    .default(false)
    .describe(
      'GET /ready answers 503 while Redis is unreachable (by default Redis is an optimisation, not a dependency)',
    ),
});

export const TimeoutsSchema = z.strictObject({
  backendSec: seconds('No backend response headers within this time: 504').default(30),
  backendIdleSec: z
    .number()
    .min(0)
    .default(60)
    .describe(
      'Longest silence between two chunks of a backend response body once its headers came; the response is then cut (an upstream timeout in logs and metrics). 0 for none',
    ),
  mappingSec: seconds(
    'Per mapping call, counted once it has a connection: the headers within it, then the body within it again',
  ).default(10),
  clientHeaderSec: seconds('A client must send the complete request headers within this time, else 408').default(30),
  clientBodySec: seconds('Longest silence between two request body chunks, else 408').default(60),
  keepAliveSec: seconds(
    'Idle keep-alive connections are closed after this time; keep it above your load balancer idle timeout',
  ).default(72),
});

export const LimitsSchema = z.strictObject({
  maxMappingBodyBytes: z
    .int()
    .positive()
    .default(10 * 1024 * 1024)
    .describe('Larger primary bodies are returned unmapped'),
  connectionsPerOrigin: z.int().positive().default(64).describe('Keep-alive connections per backend origin'),
  maxBodyBytes: z
    .int()
    .positive()
    .default(1024 * 1024 * 1024)
    .describe('Largest request body (a route may set its own maxBodyBytes): 413'),
  requestBufferBytes: z
    .int()
    .min(0)
    .default(64 * 1024)
    .describe(
      'Request bodies are read whole before the backend call; this much stays in memory, the rest goes to an unlinked temporary file',
    ),
  maxHeaderBytes: z
    .int()
    .min(1024)
    .default(16 * 1024)
    .describe('Largest request head (request line and headers): 431'),
});

export const UpstreamTlsSchema = z.strictObject({
  caFile: z
    .string()
    .min(1)
    .optional()
    .describe('PEM file of extra CAs trusted for https:// backends (private CAs); read and checked at load'),
  rejectUnauthorized: z.boolean().default(true).describe('Verify backend certificates; false only for development'),
});

export const CorsSchema = z.strictObject({
  origins: z
    .union([z.literal('*'), z.array(z.string().min(1)).min(1)])
    .describe('Allowed origins ("https://app.example.com", "https://*.example.com"), or "*" for any'),
  methods: z
    .array(z.enum(HTTP_METHODS))
    .min(1)
    .default(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'])
    .describe('Methods a preflight may allow'),
  headers: z
    .union([z.literal('*'), z.array(z.string().min(1))])
    .default('*')
    .describe('Request headers a preflight may allow; "*" allows those the browser asks for'),
  exposedHeaders: z.array(z.string().min(1)).default(['X-Request-ID']).describe('Response headers scripts may read'),
  credentials: z.boolean().default(false).describe('Allow cookies and Authorization (never with origins "*")'),
  maxAgeSec: z.int().min(0).default(600).describe('How long browsers may cache a preflight answer'),
});

export const TelemetrySchema = z.strictObject({
  metrics: z.boolean().default(true).describe('Serve GET /metrics (Prometheus text)'),
  metricsToken: z
    .string()
    .min(16)
    .optional()
    .describe(
      'When set, GET /metrics needs "Authorization: Bearer <token>" (write ${METRICS_TOKEN}); without it anyone who reaches the port reads the metrics',
    ),
  propagation: z
    .boolean()
    .default(true)
    .describe('W3C traceparent/tracestate to backends, mapping calls and the auth service, a child span id per call'),
  otlpEndpoint: z
    .string()
    .min(1)
    .optional()
    .describe(
      'OTLP/HTTP collector (e.g. http://otel-collector:4318); spans are POSTed as JSON to <endpoint>/v1/traces',
    ),
  serviceName: z.string().min(1).default('portico').describe('service.name of exported spans'),
  sampleRatio: z
    .number()
    .min(0)
    .max(1)
    .default(1)
    .describe('Share of traces started by the gateway that are sampled; a client traceparent keeps its own flag'),
});

export const AdminSchema = z.strictObject({
  port: z
    .int()
    .min(0)
    .max(65535)
    .describe(
      'Port of the admin listener: the status page and its JSON API (docs/dashboard.md); never the public port',
    ),
  host: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .describe('Address of the admin listener; keep it on loopback unless token is set'),
  token: z
    .string()
    .min(16)
    .optional()
    .describe(
      'When set, the page and its API need it: "Authorization: Bearer <token>", or the login form (an HttpOnly cookie); write ${ADMIN_TOKEN}',
    ),
});

const pemFile = (what: string) =>
  z.string().min(1).describe(`${what}: a PEM file, relative to this config file; \${VAR} works`);

export const TlsSchema = z.strictObject({
  certFile: pemFile('Certificate chain of the listener (leaf first)'),
  keyFile: pemFile('Private key of certFile'),
  minVersion: z.enum(['TLSv1.2', 'TLSv1.3']).default('TLSv1.2').describe('Oldest TLS version accepted'),
  sni: z
    .record(
      z.string().min(1),
      z.strictObject({ certFile: pemFile('Certificate chain'), keyFile: pemFile('Private key') }),
    )
    .optional()
    .describe('More certificates by server name (exact, or *.example.com for one label); certFile is the default'),
  caFile: pemFile('CAs that sign client certificates (mTLS)').optional(),
  clientAuth: z
    .enum(['none', 'optional', 'required'])
    .default('none')
    .describe('Client certificates: none, optional (verified when sent), required (the handshake fails without one)'),
  clientSubjectHeader: z
    .string()
    .regex(HEADER_NAME, 'a header name')
    .optional()
    .describe(
      'Send the verified client certificate subject (CN=...,O=...) to backends in this header; clients cannot set it',
    ),
  redirectPort: z
    .int()
    .min(0)
    .max(65535)
    .optional()
    .describe('A plain-HTTP port that answers 308 to the https:// URL (/health and /ready are served there too)'),
  hstsMaxAgeSec: z.int().min(0).optional().describe('Send Strict-Transport-Security: max-age=N on HTTPS answers'),
});

export const Http2Schema = z.strictObject({
  enabled: z
    .boolean()
    .default(true)
    .describe('Offer HTTP/2 (ALPN h2) on the TLS listener; HTTP/1.1 clients are served on the same port'),
  cleartext: z
    .boolean()
    .default(false)
    .describe(
      'Accept HTTP/2 by prior knowledge (h2c) on a plain listener, beside HTTP/1.1: behind a load balancer that terminates TLS',
    ),
  maxConcurrentStreams: z
    .int()
    .min(1)
    .max(10_000)
    .default(128)
    .describe('Requests one HTTP/2 connection may have in flight at once'),
});

export const GatewaySettingsSchema = z.strictObject({
  port: z.int().min(0).max(65535).default(8080).describe('Listen port; --port and $PORT override it'),
  host: z.string().min(1).default('0.0.0.0').describe('Listen address; --host overrides it'),
  basePath: z.string().default('/api').describe('Prefix of every gateway route; "" for none'),
  auth: AuthSchema.prefault({}).describe(
    'Token validation: local JWT (secret), JWKS (jwksUrl) or a delegated auth service',
  ),
  circuitBreaker: CircuitBreakerSchema.prefault({}).describe('One circuit breaker per backend origin'),
  mappingCache: MappingCacheSchema.prefault({}).describe('LRU cache of mapping responses, with a lifetime'),
  rateLimit: RateLimitSchema.prefault({}).describe('Default rate limit: a token bucket per client IP'),
  redis: RedisSchema.optional().describe(
    'Redis shared by every replica for rateLimit.store and mappingCache.store: redis (docs/redis.md)',
  ),
  trustProxy: z
    .array(z.string().min(1))
    .default([])
    .describe(
      'Proxies (addresses, CIDRs, or loopback, private, linklocal) whose X-Forwarded-For is believed, and extended; from anyone else it is replaced, and Forwarded / X-Real-IP are dropped',
    ),
  timeouts: TimeoutsSchema.prefault({}).describe('Deadlines for clients, backends and mapping calls, in seconds'),
  limits: LimitsSchema.prefault({}).describe('Sizes: request heads and bodies, mapped bodies, connections per backend'),
  cors: CorsSchema.optional().describe('Cross-origin resource sharing, answered by the gateway; off unless present'),
  admin: AdminSchema.optional().describe(
    'The admin listener: a read-only status page and JSON API on its own port (docs/dashboard.md); off unless present',
  ),
  telemetry: TelemetrySchema.prefault({}).describe('Metrics, trace propagation and span export'),
  upstreamTls: UpstreamTlsSchema.prefault({}).describe('Trust settings for https:// backends'),
  tls: TlsSchema.optional().describe('TLS on the listener: HTTPS with these certificates (docs/tls.md)'),
  http2: Http2Schema.prefault({}).describe('HTTP/2 on the listener (docs/tls.md): h2 over TLS, h2c by prior knowledge'),
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

export const UpstreamSchema = z
  .strictObject({
    targets: z
      .array(
        z.union([
          z.string().min(1),
          z.strictObject({
            target: z.string().min(1).describe('host:port, http://host:port or https://host'),
            weight: z.int().min(1).max(1000).default(1).describe('Share of the traffic, relative to the other targets'),
          }),
        ]),
      )
      .describe('The instances: host:port, http://host:port or https://host, or {target, weight}'),
    balance: z
      .enum(['least-request', 'round-robin', 'random'])
      .default('least-request')
      .describe(
        'How a call picks its target: least-request (the fewer in-flight of two random targets), round-robin, random (both weighted)',
      ),
    outlierDetection: z
      .strictObject({
        enabled: z.boolean().default(true).describe('Eject a target that keeps failing'),
        consecutiveFailures: z
          .int()
          .min(1)
          .default(5)
          .describe('Connection failures or 5xx in a row that eject a target'),
        baseEjectionSec: seconds('First ejection time; it doubles each time the target is ejected again').default(10),
        maxEjectionPercent: z
          .int()
          .min(0)
          .max(100)
          .default(50)
          .describe('Most targets ejected at once, as a share of the targets'),
      })
      .prefault({})
      .describe('Passive health: targets that fail in a row get no traffic for a while'),
    http2: z
      .boolean()
      .default(false)
      .describe(
        'Speak HTTP/2 to the targets (https:// targets only, negotiated by ALPN: a target that does not offer h2 gets HTTP/1.1)',
      ),
    dnsRefreshSec: seconds(
      'Host name targets are looked up again this often; each address becomes a target (a headless service)',
    ).default(30),
    healthCheck: z
      .strictObject({
        healthPath: z.string().startsWith('/').describe('GET on each target; a 2xx or 3xx answer is a pass'),
        intervalSec: seconds('Time between two checks of a target').default(10),
        timeoutSec: seconds('A check without a complete answer within this time fails').default(2),
        healthyThreshold: z.int().min(1).default(2).describe('Passes in a row that bring a target back'),
        unhealthyThreshold: z.int().min(1).default(3).describe('Failures in a row that take a target out'),
      })
      .optional()
      .describe('Active health checks: unhealthy targets get no traffic (docs/upstreams.md)'),
  })
  .describe('A named backend with several instances');

export const GatewayFileSchema = z
  .strictObject({
    upstreams: z
      .record(
        z.string().regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'a name: a letter, then letters, digits, - or _'),
        UpstreamSchema,
      )
      .optional()
      .describe('Named backends with several targets; a route or mapping service names one (docs/upstreams.md)'),
    routes: z.array(RouteSchema).describe('The gateway routes'),
    config: GatewaySettingsSchema.prefault({}).describe('Settings of the whole gateway'),
  })
  .describe('Portico gateway configuration');

/** The file after validation, with every default applied. */
export type GatewayFile = z.output<typeof GatewayFileSchema>;
export type RouteConfig = z.output<typeof RouteSchema>;
export type UpstreamConfig = z.output<typeof UpstreamSchema>;
export type GatewaySettings = z.output<typeof GatewaySettingsSchema>;
export type MappingCacheConfig = z.output<typeof MappingCacheSchema>;
export type CorsConfig = z.output<typeof CorsSchema>;
export type AdminConfig = z.output<typeof AdminSchema>;
export type RateLimitConfig = z.output<typeof RateLimitSchema>;
