/**
 * Turns a validated file into the immutable configuration the gateway serves, as data: every
 * template and origin parsed, every default applied, every decision that needs no code made
 * (route kinds, auth, retries, limits), files read. Behaviour (URL builders, claim checks, body
 * validators, header edits, field filters) is compiled from this data by each feature when the
 * route's pipeline is built (pipeline/compile-route.ts).
 */
import type { GatewayFile, GatewaySettings, RouteConfig, UpstreamConfig } from './schema.js';
import type {
  BackendSpec,
  ClientTls,
  CompiledConfig,
  CompiledTls,
  MappingRuleSpec,
  MirrorSpec,
  Origin,
  RouteKind,
  RouteSpec,
  SplitSpec,
  Template,
  UpstreamSpec,
} from './types.js';
import { readCaFile, readCertificatePair } from './tls-files.js';
import { isPrefixPattern } from './router-path.js';
import { parseTemplate } from './syntax/template.js';
import { normalHostPattern } from './syntax/host-pattern.js';
import { parseService, upstreamOrigin } from './syntax/service.js';
import { hasFieldRules } from './syntax/field-rules.js';
import { readSchema } from './json-schema.js';
import { dirname, resolve } from 'node:path';
import { compileConsumers } from './consumers-file.js';
import { compileClientTls, overGlobal } from './client-tls.js';
import { withTainhaKeys } from './tainha.js';
import { parseStickyKey } from './syntax/sticky-key.js';
import { mapEach, runWhole, type Work } from './sliced-work.js';

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

/** Compiles a validated file. Throws only on a bug: validation already rejected bad input. */
export const compileConfig = (file: GatewayFile, fileName: string): CompiledConfig =>
  runWhole(compileConfigWork(file, fileName));
/** `compileConfig` as interruptible work (./sliced-work.ts), after each route: a reload runs it in slices. */
export function* compileConfigWork(file: GatewayFile, fileName: string): Work<CompiledConfig> {
  const settings = withTainhaKeys(file.config);
  const prefix = settings.basePath === '/' ? '' : settings.basePath;
  const baseDir = dirname(fileName);
  const upstreamTls = compileClientTls(settings.upstreamTls, baseDir);
  // One origin per named upstream, shared by every route and rule that names it.
  const named = new Map(
    Object.entries(file.upstreams ?? {}).map(([name, u]) => {
      const tls =
        u.tls === undefined ? upstreamTls : compileClientTls(overGlobal(u.tls, settings.upstreamTls), baseDir);
      return [name, upstreamOrigin(compileUpstream(name, u, tls))];
    }),
  );
  // And one per service string: the routes to one service share its origin, parsed once.
  const parsed = new Map<string, Origin>();
  const originOf = (service: string) => {
    let origin = named.get(service) ?? parsed.get(service);
    if (origin === undefined) parsed.set(service, (origin = mustService(service)));
    return origin;
  };
  const context: RouteContext = { settings, prefix, baseDir, originOf };
  const routes = yield* mapEach(file.routes, (r, index) => compileRoute(r, index, context));
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
  return Object.freeze({
    file: fileName,
    settings,
    prefix,
    routes: Object.freeze(routes),
    // Validation put a consumers file's list here (validate.ts): what was checked is what is served.
    consumers: compileConsumers(file.consumers ?? []),
    consumersFile:
      settings.consumersFile === undefined ? undefined : resolve(dirname(fileName), settings.consumersFile),
    upstreamTls,
    plugins: Object.freeze(plugins),
    upstreams: named,
    ...(tls ? { tls } : {}),
  });
}

function compileRoute(r: RouteConfig, index: number, context: RouteContext): RouteSpec {
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
    index,
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

function compileUpstream(name: string, u: UpstreamConfig, tls: ClientTls): UpstreamSpec {
  return {
    name,
    tls,
    targets: u.targets.map((t) =>
      typeof t === 'string'
        ? { origin: mustService(t), weight: 1 }
        : { origin: mustService(t.target), weight: t.weight },
    ),
    balance: u.balance,
    http2: u.http2,
    dnsRefreshMs: u.dnsRefreshSec * 1000,
    outlier: {
      enabled: u.outlierDetection.enabled,
      consecutiveFailures: u.outlierDetection.consecutiveFailures,
      baseEjectionMs: u.outlierDetection.baseEjectionSec * 1000,
      maxEjectionPercent: u.outlierDetection.maxEjectionPercent,
    },
    ...(u.healthCheck === undefined
      ? {}
      : {
          healthCheck: {
            path: u.healthCheck.healthPath,
            intervalMs: u.healthCheck.intervalSec * 1000,
            timeoutMs: u.healthCheck.timeoutSec * 1000,
            healthyThreshold: u.healthCheck.healthyThreshold,
            unhealthyThreshold: u.healthCheck.unhealthyThreshold,
          },
        }),
  };
}

function compileTls(t: NonNullable<GatewayFile['config']['tls']>, baseDir: string): CompiledTls {
  const pair = (certFile: string, keyFile: string) => {
    const read = readCertificatePair(certFile, keyFile, baseDir);
    if (Array.isArray(read)) throw new Error(`unvalidated TLS files: ${read.map((p) => p.message).join('; ')}`);
    return read;
  };
  const main = pair(t.certFile, t.keyFile);
  const ca = t.caFile === undefined ? undefined : readCaFile(t.caFile, baseDir);
  if (Array.isArray(ca)) throw new Error(`unvalidated TLS files: ${ca.map((p) => p.message).join('; ')}`);
  return {
    cert: main.cert,
    key: main.key,
    minVersion: t.minVersion,
    sni: Object.entries(t.sni ?? {}).map(([name, f]) => ({ name: name.toLowerCase(), ...pair(f.certFile, f.keyFile) })),
    ca,
    clientAuth: t.clientAuth,
    redirectPort: t.redirectPort,
    hstsMaxAgeSec: t.hstsMaxAgeSec,
  };
}

const mustTemplate = (source: string): Template => must<Template>(parseTemplate(source), 'template');
const mustService = (service: string): Origin => must<Origin>(parseService(service), 'service');

/** What validation already parsed without error; throws only on a bug. */
function must<T extends object>(result: T | { readonly error: string }, what: string): T {
  if ('error' in result) throw new Error(`unvalidated ${what}: ${result.error}`);
  return result as T;
}
