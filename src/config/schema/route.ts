/** A gateway route: one entry of `routes`. */
import { RouteCacheSchema } from './cache.js';
import { z } from 'zod';
import { HTTP_METHODS, seconds } from './primitives.js';
import { FailureStatusesSchema } from './circuit-breaker.js';
import { limitKey } from './limit-key.js';
import { RouteQuotaSchema } from './quotas.js';
import { RouteAdmissionSchema } from './admission.js';
import { IpRulesSchema } from './ip-rules.js';
import { PluginNameSchema } from './plugins.js';
import {
  AggregateBackendSchema,
  FieldRulesShape,
  HeaderEditSchema,
  MappingRuleSchema,
  RequireSchema,
} from './route-parts.js';
import { MirrorSchema, SplitSchema, StickyBySchema } from './route-traffic.js';

export const RouteSchema = z
  .strictObject({
    method: z
      .enum(HTTP_METHODS)
      .describe('HTTP method. A GET route also answers HEAD unless a HEAD route is configured for the same path'),
    route: z
      .string()
      .describe(
        'Gateway path under basePath; {param} segments are dynamic, several per route allowed (/a/{x}/b/{y}, /files/{name}.{ext}). A {param} ends at /, . or -. A final /* makes a prefix route that owns every path below it (/static/*: /static/ and /static/a/b, not /static); (, ), ? and # are refused',
      ),
    hosts: z
      .array(z.string())
      .min(1)
      .optional()
      .describe(
        'Serve this route only for these hosts (Host, or :authority on HTTP/2): exact names (api.example.com), IP addresses, or *.domain for one label (*.example.com matches a.example.com, not example.com nor a.b.example.com). Case-insensitive, port ignored. Default: every host',
      ),
    service: z
      .string()
      .optional()
      .describe(
        'Backend: host:port, http://host:port or https://host; http:// when no scheme. A host only: a path here is an error. Required unless the route has backends or a split',
      ),
    path: z
      .string()
      .optional()
      .describe(
        'Backend path. May hold {param}s and a query template (/users?companyId={companyId}). Every parameter must appear in both route and path. On a prefix route, a * segment takes the rest of the client path (/files/*). Required unless the route has backends',
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
    cache: RouteCacheSchema.optional().describe(
      'Serve GET answers from the shared HTTP cache as RFC 9111 allows (true, or settings); docs/caching.md',
    ),
    compression: z
      .boolean()
      .optional()
      .describe(
        "false: never compress this route's answers; true: compress them with config.compression's settings even when compression is not enabled for every route",
      ),
    isSSE: z.boolean().default(false).describe('Stream a Server-Sent Events response without buffering'),
    isWebSocket: z
      .boolean()
      .default(false)
      .describe('Tunnel a WebSocket connection to the backend (the method must be GET)'),
    grpc: z
      .boolean()
      .default(false)
      .describe(
        'A gRPC route: HTTP/2 to the backend (h2c for http://, ALPN h2 for https://), trailers relayed, grpc-timeout honoured, gateway errors answered as gRPC statuses; clients must use HTTP/2 (docs/routing.md, "gRPC")',
      ),
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
    plugins: z
      .array(PluginNameSchema)
      .optional()
      .describe(
        'Plugins (from the top-level plugins: list) this route runs, after those of config.plugins (docs/plugins.md)',
      ),
    headers: z
      .strictObject({
        request: HeaderEditSchema.optional().describe('Edits of the headers sent to the backend'),
        response: HeaderEditSchema.optional().describe('Edits of the backend response headers sent to the client'),
        allowUnderscores: z
          .boolean()
          .default(false)
          .describe(
            'Forward client header names with "_" (X_Tenant). Default: dropped, as nginx does, since CGI, WSGI, Rack and PHP servers read X_Role as X-Role; reserved names are refused in both spellings either way',
          ),
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
        key: limitKey("What this route's buckets count by; default config.rateLimit.key").optional(),
      })
      .optional()
      .describe('Per-route rate limit: its own token bucket per client IP, or enabled: false to exempt the route'),
    quota: RouteQuotaSchema.optional().describe(
      "This route's quota: its own windows (and plans), or enabled: false to exempt it from config.quotas",
    ),
    admission: RouteAdmissionSchema.optional().describe(
      "This route's own limit on requests in flight, counted besides config.admission.maxInFlight (docs/overload.md)",
    ),
    ipRules: IpRulesSchema.optional().describe(
      "This route's client addresses let in or refused; replaces config.ipRules for the route (docs/security.md)",
    ),
    circuitBreaker: z
      .strictObject({
        failureStatuses: FailureStatusesSchema.optional().describe(
          "Backend statuses of this route's calls that count as failures for its origin's circuit; default config.circuitBreaker.failureStatuses (every 5xx). Another 5xx counts neither way",
        ),
      })
      .optional()
      .describe(
        "This route's part in its origin's circuit (config.circuitBreaker): a route whose clients can make the backend answer 500 leaves 500 out",
      ),
    split: SplitSchema.optional(),
    stickyBy: StickyBySchema.optional(),
    mirror: MirrorSchema.optional(),
  })
  .describe('A gateway route');

export type RouteConfig = z.output<typeof RouteSchema>;
