/**
 * What config/ produces: the validated, defaulted, readonly data of a configuration file
 * (config/compile.ts), and the problems of a file that is not valid. Plain data and types only,
 * so any module can import it. Each feature compiles its own behaviour from this data when the
 * route's pipeline is built (pipeline/compile-route.ts). The settings types (`GatewaySettings`,
 * `RouteConfig`, ...) are the schema's output and live with it in schema.ts.
 */
import type {
  GatewaySettings,
  HttpMethod,
  IpRulesConfig,
  PluginSpec,
  RouteCacheSpec,
  RouteConfig,
  TracingSettings,
} from './schema.js';
import type { ClientTls, CompiledTls } from './schema/tls.js';

export type { ClientTls, CompiledTls } from './schema/tls.js';
export type { TracingSettings };

/** One problem of a configuration file, located (config/problems.ts formats it). */
export interface Problem {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly message: string;
  readonly hint?: string;
  /** Absent for an error. A warning or note never stops the gateway; `check` prints it. */
  readonly severity?: 'warning' | 'note';
}

export type TemplatePart = string | { readonly param: string };

/** A `{param}` template (a route's or a backend's path), parsed by config/syntax/template.ts. */
export interface Template {
  readonly source: string;
  readonly parts: readonly TemplatePart[];
  /** Placeholder names in order of appearance (may repeat). */
  readonly params: readonly string[];
  /** True when the template already holds a `?`: client query is then appended with `&`. */
  readonly hasQuery: boolean;
  /** Names of the query parameters the template writes itself (decoded); empty without a query. */
  readonly queryKeys: ReadonlySet<string>;
}

/**
 * A backend as a `service` string names it (config/syntax/service.ts). The origin
 * (`scheme://host:port`, port always written) keys the connection pool and the circuit of a
 * backend (docs/design-decisions.md).
 */
export interface Origin {
  /** `http://host:port`, the port always explicit. */
  readonly key: string;
  readonly protocol: 'http:' | 'https:';
  readonly hostname: string;
  readonly port: number;
  /** Value of the `Host` header sent to this backend. */
  readonly hostHeader: string;
  /** TLS server name when `hostname` is an address resolved from a name (upstream/dns-targets.ts). */
  readonly serverName?: string;
  /**
   * A named upstream's targets (`upstreams:`, docs/upstreams.md); absent for a plain `service`.
   * A named upstream's origin is keyed by its name: one pool per target, one circuit for all.
   */
  readonly upstream?: UpstreamSpec;
}

export type Balance = 'least-request' | 'round-robin' | 'random';

/** A named upstream as compiled: its targets and how calls are spread over them. */
export interface UpstreamSpec {
  readonly name: string;
  readonly targets: readonly { readonly origin: Origin; readonly weight: number }[];
  readonly balance: Balance;
  readonly outlier: {
    readonly enabled: boolean;
    readonly consecutiveFailures: number;
    readonly baseEjectionMs: number;
    readonly maxEjectionPercent: number;
  };
  /** Calls to the targets may use HTTP/2 (undici's `allowH2`, negotiated by ALPN over TLS). */
  readonly http2: boolean;
  /** TLS to the https:// targets: the upstream's `tls` over `config.upstreamTls`; undefined: `config.upstreamTls`. */
  readonly tls?: ClientTls;
  /** How often host name targets are looked up again (upstream/dns-targets.ts). */
  readonly dnsRefreshMs: number;
  /** Active health checks (upstream/health-check.ts); undefined: none. */
  readonly healthCheck?: {
    readonly path: string;
    readonly intervalMs: number;
    readonly timeoutMs: number;
    readonly healthyThreshold: number;
    readonly unhealthyThreshold: number;
  };
}

/** Field rules of a JSON answer (`response:` on a route, the same keys on a backend): docs/field-filtering.md. */
export interface FieldRules {
  readonly allow?: readonly string[] | undefined;
  readonly deny?: readonly string[] | undefined;
  readonly rename?: Readonly<Record<string, string>> | undefined;
}

/** One side of a route's header rules (`headers.request` / `headers.response`), as written. */
export interface HeaderRules {
  readonly set?: Readonly<Record<string, string>> | undefined;
  readonly remove?: readonly string[] | undefined;
}

/** A mapping rule's `batch`, as written (docs/mapping.md "Batched mapping"). */
export interface BatchRule {
  readonly path: string;
  readonly separator: string;
  readonly key: string;
  readonly max: number;
}

/**
 * `mapping`: the JSON answer is buffered and transformed (mapping rules, field rules, or both);
 * `grpc`: gRPC calls over HTTP/2, streamed both ways (`grpc: true`).
 */
export type RouteKind = 'standard' | 'mapping' | 'aggregate' | 'sse' | 'websocket' | 'grpc';

/** One response-mapping rule of a route. */
export interface MappingRuleSpec {
  readonly index: number;
  readonly tag: string;
  readonly removeKeyMapping: boolean;
  readonly service: string;
  readonly origin: Origin;
  readonly path: Template;
  /** The rule's `batch`; undefined: one call per distinct value. */
  readonly batch: BatchRule | undefined;
}

/** One backend of an aggregated route (`backends:`). */
export interface BackendSpec {
  readonly index: number;
  readonly service: string;
  readonly origin: Origin;
  readonly path: Template;
  /** Key the answer is nested under; undefined: its fields are merged at the top level. */
  readonly group: string | undefined;
  /** The field taken from the answer, as dot-path names; undefined: the whole answer. */
  readonly target: readonly string[] | undefined;
  /** The backend's allow/deny/rename; undefined when they would leave every answer as it is. */
  readonly fields: FieldRules | undefined;
}

/** Where a split's sticky key is read (`stickyBy`, config/syntax/sticky-key.ts); header names lower-case. */
export type StickyKey =
  | { readonly from: 'header'; readonly name: string }
  | { readonly from: 'cookie'; readonly name: string }
  | { readonly from: 'claim'; readonly name: string };

/** One arm of a route's traffic split: a backend of its own, with its own pool and circuit. */
export interface SplitArmSpec {
  readonly index: number;
  /** The `service` or `upstream` as written: the arm's label in metrics and on the status page. */
  readonly name: string;
  readonly origin: Origin;
  readonly weight: number;
}

/** A route's `split` and `stickyBy` (docs/routing.md "Traffic splits"). */
export interface SplitSpec {
  readonly arms: readonly SplitArmSpec[];
  /** Where a client's sticky key is read; undefined: every request is placed by weight alone. */
  readonly stickyBy: StickyKey | undefined;
}

/** A route's `mirror` (docs/routing.md "Mirroring"). */
export interface MirrorSpec {
  readonly service: string;
  readonly origin: Origin;
  readonly percent: number;
  readonly maxBodyBytes: number;
  readonly maxInFlight: number;
  readonly timeoutMs: number;
}

/** A route as configured: validated, defaults applied, every decision that needs no code made. */
export interface RouteSpec {
  /** `GET /users/{id}`: the label in logs and metrics (a template, never a raw path). */
  readonly id: string;
  readonly method: HttpMethod;
  /** The route as written, without basePath. */
  readonly route: string;
  /** The path clients call: basePath + route. */
  readonly clientPath: string;
  /**
   * A prefix route (`/static/*`): it owns every path below its prefix, and the rest of the client
   * path goes where `path` holds its `*` (docs/routing.md "Prefix routes").
   */
  readonly isPrefix: boolean;
  /**
   * The hosts the route serves: exact names and `*.domain` patterns, lower case without a final
   * dot (config/syntax/host-pattern.ts); empty for a route that serves every host.
   */
  readonly hosts: readonly string[];
  /** The backend; an aggregated route's first backend (its own are in `backends`). */
  readonly service: string;
  readonly origin: Origin;
  readonly path: Template;
  readonly kind: RouteKind;
  /** An aggregated route's backends, in the order written; empty for every other kind. */
  readonly backends: readonly BackendSpec[];
  readonly requiresAuth: boolean;
  /** The route's `require:` rules on a valid token's claims; undefined when it has none. */
  readonly require: RouteConfig['require'];
  readonly mapping: readonly MappingRuleSpec[];
  /** Largest request body: the route's maxBodyBytes, else config.limits.maxBodyBytes (at most request.maxBytes). */
  readonly maxBodyBytes: number;
  /** The route's `request.schema`, read (a file's JSON parsed); undefined without one. */
  readonly requestSchema: unknown;
  /** Read the whole request body before the backend call (layers/request-buffer.ts). */
  readonly buffersRequest: boolean;
  /** The route's `response` field rules (allow, deny, rename); undefined when they would leave every answer as it is. */
  readonly fields: FieldRules | undefined;
  /** The route's header rules, as written; undefined for a side without rules. */
  readonly headers: {
    readonly request: HeaderRules | undefined;
    readonly response: HeaderRules | undefined;
    /** Client header names with `_` are forwarded (`headers.allowUnderscores`; upstream/trust-boundary.ts). */
    readonly allowUnderscores: boolean;
  };
  /** The route's `cache` settings; undefined: its answers are never stored or served from the cache. */
  readonly cache: RouteCacheSpec | undefined;
  /** The route's answers are compressed for clients that accept it (config.compression, the route's `compression`). */
  readonly compresses: boolean;
  /** The route's own rate-limit options as written (resolved by layers/rate-limit.ts). */
  readonly rateLimit: RouteConfig['rateLimit'];
  /** The route's own quota options as written (resolved by layers/quota.ts). */
  readonly quota: RouteConfig['quota'];
  /**
   * The client address rules of the route: its own `ipRules`, else `config.ipRules` (the same
   * object for every route that takes them, so they are compiled once); undefined when they
   * refuse nobody (layers/ip-rules.ts).
   */
  readonly ipRules: IpRulesConfig | undefined;
  /**
   * Retries allowed per request on a named upstream: the route's `retries`, or 0 for a method that
   * is not idempotent (POST, PATCH) unless `retryNonIdempotent`.
   */
  readonly retries: number;
  /** `config.timeouts` with the route's own `timeouts` over it. */
  readonly timeouts: GatewaySettings['timeouts'];
  /**
   * The route's own `circuitBreaker.failureStatuses`; undefined: its origin's
   * (`config.circuitBreaker.failureStatuses`, read from the breaker so that a reload reaches it).
   */
  readonly circuitFailureStatuses: readonly number[] | undefined;
  /** The route's traffic split; undefined: every request goes to `origin`. */
  readonly split: SplitSpec | undefined;
  /** Where copies of a sample of the route's requests go; undefined: none are copied. */
  readonly mirror: MirrorSpec | undefined;
  /** The route's own limit on requests in flight (`admission.maxInFlight`); undefined: none. */
  readonly maxInFlight: number | undefined;
  readonly plugins: readonly string[]; // `config.plugins`, then the route's own, each once
}

/** A consumer (docs/consumers.md), from `consumers:` or `config.consumersFile`. */
export interface ConsumerSpec {
  readonly id: string;
  /** The SHA-256 digests of its keys, lower-case hex without `sha256:`. */
  readonly keyHashes: readonly string[];
  readonly claims: Readonly<Record<string, unknown>>;
  readonly plan: string | undefined;
}

/** A loaded configuration: what the gateway serves, as data. */
export interface CompiledConfig {
  readonly file: string;
  readonly settings: GatewaySettings;
  /** basePath normalised: '' when there is no prefix. */
  readonly prefix: string;
  readonly routes: readonly RouteSpec[];
  /** The consumers of `consumers:` or, as read at load, of `config.consumersFile`. */
  readonly consumers: readonly ConsumerSpec[];
  /** `config.consumersFile` resolved against the configuration's folder; undefined without one. */
  readonly consumersFile: string | undefined;
  readonly plugins: readonly PluginSpec[]; // the top-level `plugins:` list, in order; empty without one
  /** TLS on the listener; undefined: plain HTTP. */
  readonly tls?: CompiledTls;
  /** TLS of calls to https:// backends (`config.upstreamTls`); undefined: the defaults (system CAs, verified, no client certificate). */
  readonly upstreamTls?: ClientTls;
  /** `telemetry` merged with the OTEL_* environment at load; absent when compiled without one (`settings.telemetry` alone). */
  readonly tracing?: TracingSettings;
  /** The named upstreams (`upstreams:`) by name, each with its origin: what a plugin's `setTarget` may choose. */
  readonly upstreams: ReadonlyMap<string, Origin>;
}

/** `notices`: warnings and notes about a valid file, for `check` to print. */
export type LoadResult =
  { ok: true; config: CompiledConfig; notices: readonly Problem[] } | { ok: false; problems: readonly Problem[] };
