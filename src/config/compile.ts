/**
 * Turns a validated file into the immutable configuration the gateway serves, as data: every
 * template and origin parsed, every default applied, every decision that needs no code made
 * (route kinds, auth, retries, limits), files read. Behaviour (URL builders, claim checks, body
 * validators, header edits, field filters) is compiled from this data by each feature when the
 * route's pipeline is built (pipeline/compile-route.ts).
 */
import type { GatewayFile, GatewaySettings, RouteConfig } from './schema.js';
import type {
  BackendSpec,
  CompiledConfig,
  MappingRuleSpec,
  MirrorSpec,
  Origin,
  RouteKind,
  RouteSpec,
  SplitSpec,
  Template,
} from './types.js';
import { isPrefixPattern } from './router-path.js';
import { parseTemplate } from './syntax/template.js';
import { normalHostPattern } from './syntax/host-pattern.js';
import { hasFieldRules } from './syntax/field-rules.js';
import { readSchema } from './json-schema.js';
import { dirname, resolve } from 'node:path';
import { parseStickyKey } from './syntax/sticky-key.js';
import { mapEach, runWhole, type Work } from './sliced-work.js';
import { routeSource, sourceKey, sourceRoute, type RouteSource } from './route-key.js';
import { headKeyOf, keptFrom, remember, tlsIdsOf } from './compile-memo.js';
import { compileOrigins, compileTls, must, mustService } from './compile-head.js';
import { compileConsumers } from './consumers-file.js';
import { withTainhaKeys } from './tainha.js';

/** Methods a retry cannot make do their work twice (RFC 9110 9.2.2). */
const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** What every route of one file is compiled against. */
interface RouteContext {
  readonly settings: GatewaySettings;
  readonly prefix: string;
  readonly baseDir: string;
  /** The origin a `service` names: a named upstream's, else the one its text describes. */
  readonly originOf: (service: string) => Origin;
}

/** What a load may hand compilation besides the file (a reload's: ../ops/reload.ts). */
export interface CompileOptions {
  /** The routes as the reload's worker sends them (./route-key.ts); absent: `file.routes`, keyed here. */
  readonly sources?: readonly RouteSource[];
  /** `headKeyOf(file)`, when the worker made it. */
  readonly headKey?: string;
  /** The configuration served now: what the file did not change is kept from it (./compile-memo.ts). */
  readonly previous?: CompiledConfig;
}

/** Compiles a validated file. Throws only on a bug: validation already rejected bad input. */
export const compileConfig = (file: GatewayFile, fileName: string, options?: CompileOptions): CompiledConfig =>
  runWhole(compileConfigWork(file, fileName, options));
/** `compileConfig` as interruptible work (./sliced-work.ts), after each route: a reload runs it in slices. */
export function* compileConfigWork(
  file: GatewayFile,
  fileName: string,
  options: CompileOptions = {},
): Work<CompiledConfig> {
  const baseDir = dirname(fileName);
  const origins = compileOrigins(file, baseDir);
  const head = {
    headKey: options.headKey ?? headKeyOf(file),
    fileName,
    tlsIds: tlsIdsOf(origins.upstreamTls, origins.named),
  };
  const kept = keptFrom(options.previous, head);
  const { upstreamTls, named } = kept ?? origins;
  const settings = kept?.settings ?? withTainhaKeys(file.config);
  // Validation put a consumers file's list here (validate.ts): what was checked is what is served.
  const consumers = kept?.consumers ?? compileConsumers(file.consumers ?? []);
  const prefix = settings.basePath === '/' ? '' : settings.basePath;
  // And one origin per service string: the routes to one service share it, parsed once (or kept;
  // the map holds only the services this load looked up, so it never outgrows the file).
  const parsed = new Map<string, Origin>();
  const originOf = (service: string) => {
    let origin = named.get(service) ?? parsed.get(service);
    if (origin === undefined) parsed.set(service, (origin = kept?.parsed.get(service) ?? mustService(service)));
    return origin;
  };
  const context: RouteContext = { settings, prefix, baseDir, originOf };
  const specs = new Map<string, RouteSpec>();
  const { sources } = options;
  // By index: a route is the worker's source, or the file's own route keyed here.
  const routes = yield* mapEach<unknown, RouteSpec>(sources ?? file.routes, (_, index) => {
    const source = sources === undefined ? routeSource(file.routes[index]!) : sources[index]!;
    const key = sourceKey(source);
    const known = kept?.specs.get(key);
    if (known !== undefined) return remembered(specs, key, known);
    const r = sources === undefined ? file.routes[index]! : sourceRoute(source);
    const spec = compileRoute(r, context);
    // A schema file may change while the route does not: read again at every load.
    return typeof r.request?.schema === 'string' ? spec : remembered(specs, key, spec);
  });
  const tls = settings.tls === undefined ? undefined : compileTls(settings.tls, baseDir);
  const plugins = (file.plugins ?? []).map((p) =>
    Object.freeze({
      name: p.name,
      module: p.module,
      baseDir,
      options: p.options,
      timeoutMs: p.timeoutMs,
    }),
  );
  const frozenRoutes = Object.freeze(routes);
  remember(frozenRoutes, { ...head, settings, upstreamTls, named, parsed, consumers, specs });
  return Object.freeze({
    file: fileName,
    settings,
    prefix,
    routes: frozenRoutes,
    consumers,
    consumersFile:
      settings.consumersFile === undefined ? undefined : resolve(dirname(fileName), settings.consumersFile),
    upstreamTls,
    plugins: Object.freeze(plugins),
    upstreams: named,
    ...(tls ? { tls } : {}),
  });
}

function remembered(specs: Map<string, RouteSpec>, key: string, spec: RouteSpec): RouteSpec {
  specs.set(key, spec);
  return spec;
}

function compileRoute(r: RouteConfig, context: RouteContext): RouteSpec {
  const { settings, prefix } = context;
  const backends = (r.backends ?? []).map((b, i): BackendSpec =>
    Object.freeze({
      index: i,
      service: b.service,
      origin: context.originOf(b.service),
      path: mustTemplate(b.path),
      group: b.group,
      target: b.target?.split('.'),
      fields: fieldRules(b),
    }),
  );
  const split = compileSplit(r, context);
  // Validation: a route has service and path, a split and path, or backends.
  const service = r.service ?? split?.arms[0]!.name ?? backends[0]!.service;
  const mapping = (r.mapping ?? []).map((m, i): MappingRuleSpec => ({
    index: i,
    tag: m.tag,
    removeKeyMapping: m.removeKeyMapping,
    service: m.service,
    origin: context.originOf(m.service),
    path: mustTemplate(m.path),
    batch: m.batch,
  }));
  const fields = fieldRules(r.response);
  return Object.freeze({
    id: `${r.method} ${r.route}`,
    method: r.method,
    route: r.route,
    clientPath: prefix + r.route,
    isPrefix: isPrefixPattern(r.route),
    hosts: Object.freeze([...new Set((r.hosts ?? []).map(normalHostPattern))]),
    service,
    origin: context.originOf(service),
    path: r.path === undefined ? backends[0]!.path : mustTemplate(r.path),
    kind: routeKind(r, backends.length > 0, mapping.length > 0 || fields !== undefined),
    requiresAuth: r.protected ?? (r.require !== undefined || (settings.auth.defaultProtected && !r.public)),
    require: r.require,
    backends: Object.freeze(backends),
    mapping: Object.freeze(mapping),
    fields,
    maxBodyBytes: Math.min(r.maxBodyBytes ?? settings.limits.maxBodyBytes, r.request?.maxBytes ?? Infinity),
    requestSchema: r.request === undefined ? undefined : readSchema(r.request.schema, context.baseDir),
    buffersRequest: r.requestBuffering && !r.isWebSocket && !r.isSSE && !r.grpc,
    headers: Object.freeze({
      request: r.headers?.request,
      response: r.headers?.response,
      allowUnderscores: r.headers?.allowUnderscores === true,
    }),
    compresses: compresses(r, settings),
    cache: routeCache(r),
    rateLimit: r.rateLimit,
    quota: r.quota,
    ipRules: activeIpRules(r.ipRules ?? settings.ipRules),
    plugins: Object.freeze([...new Set([...settings.plugins, ...(r.plugins ?? [])])]),
    retries: IDEMPOTENT.has(r.method) || r.retryNonIdempotent ? r.retries : 0,
    timeouts: { ...settings.timeouts, ...r.timeouts },
    circuitFailureStatuses: r.circuitBreaker?.failureStatuses,
    split,
    mirror: compileMirror(r, context),
    maxInFlight: r.admission?.maxInFlight,
  });
}

/** The route's split with each arm's origin; undefined without one. */
function compileSplit(r: RouteConfig, context: RouteContext): SplitSpec | undefined {
  if (r.split === undefined) return undefined;
  const sticky = r.stickyBy === undefined ? undefined : parseStickyKey(r.stickyBy);
  if (sticky !== undefined && 'error' in sticky) throw new Error(`unvalidated stickyBy: ${sticky.error}`);
  return Object.freeze({
    arms: Object.freeze(
      r.split.map((arm, index) => {
        // Validation: exactly one of service and upstream.
        const name = (arm.service ?? arm.upstream)!;
        return Object.freeze({ index, name, origin: context.originOf(name), weight: arm.weight });
      }),
    ),
    stickyBy: sticky,
  });
}

function compileMirror(r: RouteConfig, context: RouteContext): MirrorSpec | undefined {
  const m = r.mirror;
  if (m === undefined) return undefined;
  return Object.freeze({
    service: m.service,
    origin: context.originOf(m.service),
    percent: m.percent,
    maxBodyBytes: m.maxBodyBytes,
    maxInFlight: m.maxInFlight,
    timeoutMs: m.timeoutSec * 1000,
  });
}

/** A route's `cache` with its defaults; only GET routes cache (route-rules.ts refuses the others). */
function routeCache(r: RouteConfig): RouteSpec['cache'] {
  if (r.cache === undefined || r.cache === false || r.method !== 'GET' || r.isSSE || r.isWebSocket) return undefined;
  const c = r.cache === true ? {} : r.cache;
  return Object.freeze({
    ttlSec: c.ttlSec,
    keyBy: Object.freeze(c.keyBy ?? []),
    staleWhileRevalidateSec: c.staleWhileRevalidateSec ?? 0,
    staleIfErrorSec: c.staleIfErrorSec ?? 0,
  });
}

/**
 * Whether a route's answers are compressed: a stream of events or a tunnel never is (an event
 * held in a compressor's window would arrive late); route-rules.ts refuses `compression: true` there.
 * Nor a gRPC call: gRPC compresses its messages itself (`grpc-encoding`), and its clients read
 * no `content-encoding` (grpc-rules.ts refuses `compression: true` there).
 */
function compresses(r: RouteConfig, settings: GatewaySettings): boolean {
  if (r.isSSE || r.isWebSocket || r.grpc) return false;
  return r.compression ?? settings.compression.enabled;
}

/** Rules that refuse nobody (both lists empty) are none: the route gets no check at all. */
function activeIpRules(rules: GatewaySettings['ipRules']): GatewaySettings['ipRules'] {
  return rules === undefined || (rules.allow.length === 0 && rules.deny.length === 0) ? undefined : rules;
}

function routeKind(r: RouteConfig, aggregates: boolean, shapesJson: boolean): RouteKind {
  if (r.isWebSocket) return 'websocket';
  // Validation refuses grpc with any other kind's keys.
  if (r.grpc) return 'grpc';
  if (aggregates) return 'aggregate';
  if (r.isSSE) return 'sse';
  return shapesJson ? 'mapping' : 'standard';
}

/** The allow/deny/rename of a route's answer or a backend's; undefined when they change nothing. */
function fieldRules(rules: RouteConfig['response']): RouteSpec['fields'] {
  return hasFieldRules(rules) ? { allow: rules.allow, deny: rules.deny, rename: rules.rename } : undefined;
}

const mustTemplate = (source: string): Template => must<Template>(parseTemplate(source), 'template');
