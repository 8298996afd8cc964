/**
 * Turns a validated file into the immutable configuration the gateway serves: every template,
 * URL builder and origin is prepared here, once, so the request path only looks things up.
 */
import type { GatewayFile, UpstreamConfig } from './schema.js';
import type { CompiledBackend, CompiledConfig, CompiledMappingRule, CompiledRoute, CompiledTls } from './types.js';
import { readCaFile, readCertificatePair } from './tls-files.js';
import { toRouterPath } from './router-path.js';
import { compileUrlBuilder, parseTemplate, type Template } from '../upstream/target-url.js';
import { parseService, upstreamOrigin, type Origin, type UpstreamSpec } from '../upstream/origin.js';
import { compileRequirements } from '../auth/requirements.js';
import { compileBodySchema, readSchema } from '../guards/json-schema.js';
import { compileHeaderEdit } from '../upstream/header-edits.js';
import { compileFieldFilter } from '../mapping/field-filter.js';
import { compileBatch } from '../mapping/batch.js';
import { dirname } from 'node:path';

/** Methods a retry cannot make do their work twice (RFC 9110 9.2.2). */
const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** Compiles a validated file. Throws only on a bug: validation already rejected bad input. */
export function compileConfig(file: GatewayFile, fileName: string): CompiledConfig {
  // tainha-gateway's name for the keep-alive idle time (validation refuses both at once).
  const { idleTimeoutSec } = file.config;
  const settings =
    idleTimeoutSec === undefined
      ? file.config
      : { ...file.config, timeouts: { ...file.config.timeouts, keepAliveSec: idleTimeoutSec } };
  const prefix = settings.basePath === '/' ? '' : settings.basePath;
  // One origin per named upstream, shared by every route and rule that names it.
  const named = new Map(
    Object.entries(file.upstreams ?? {}).map(([name, u]) => [name, upstreamOrigin(compileUpstream(name, u))]),
  );
  const mustOrigin = (service: string): Origin => named.get(service) ?? mustService(service);
  const routes = file.routes.map((r, index): CompiledRoute => {
    const backends = (r.backends ?? []).map((b, i): CompiledBackend => {
      const t = mustTemplate(b.path);
      return Object.freeze({
        index: i,
        service: b.service,
        origin: mustOrigin(b.service),
        path: t,
        buildPath: compileUrlBuilder(t),
        group: b.group,
        target: b.target?.split('.'),
        filter: compileFieldFilter(b),
      });
    });
    // Validation: a route has service and path, or backends.
    const service = r.service ?? backends[0]!.service;
    const path = r.path === undefined ? backends[0]!.path : mustTemplate(r.path);
    const mapping = (r.mapping ?? []).map((m, i): CompiledMappingRule => {
      const t = mustTemplate(m.path);
      return {
        index: i,
        tag: m.tag,
        removeKeyMapping: m.removeKeyMapping,
        service: m.service,
        origin: mustOrigin(m.service),
        path: t,
        buildPath: compileUrlBuilder(t),
        batch: m.batch === undefined ? undefined : compileBatch(m.batch),
      };
    });
    const filterResponse = compileFieldFilter(r.response);
    return Object.freeze({
      id: `${r.method} ${r.route}`,
      index,
      method: r.method,
      route: r.route,
      clientPath: prefix + r.route,
      routerPath: toRouterPath(prefix + r.route),
      service,
      origin: mustOrigin(service),
      path,
      buildPath: compileUrlBuilder(path),
      kind: r.isWebSocket
        ? 'websocket'
        : backends.length > 0
          ? 'aggregate'
          : r.isSSE
            ? 'sse'
            : mapping.length > 0 || filterResponse !== undefined
              ? 'mapping'
              : 'standard',
      requiresAuth: r.protected ?? (r.require !== undefined || (settings.auth.defaultProtected && !r.public)),
      checkClaims: r.require === undefined ? undefined : compileRequirements(r.require, settings.auth.rolesClaim),
      backends: Object.freeze(backends),
      mapping: Object.freeze(mapping),
      filterResponse,
      maxBodyBytes: Math.min(r.maxBodyBytes ?? settings.limits.maxBodyBytes, r.request?.maxBytes ?? Infinity),
      validateBody:
        r.request === undefined ? undefined : compileBodySchema(readSchema(r.request.schema, dirname(fileName))),
      buffersRequest: r.requestBuffering && !r.isWebSocket && !r.isSSE,
      editHeaders: Object.freeze({
        request: compileHeaderEdit(r.headers?.request),
        response: compileHeaderEdit(r.headers?.response),
      }),
      rateLimit: r.rateLimit,
      retries: IDEMPOTENT.has(r.method) || r.retryNonIdempotent ? r.retries : 0,
      timeouts: { ...settings.timeouts, ...r.timeouts },
    });
  });
  const tls = settings.tls === undefined ? undefined : compileTls(settings.tls, dirname(fileName));
  return Object.freeze({ file: fileName, settings, prefix, routes: Object.freeze(routes), ...(tls ? { tls } : {}) });
}

function compileUpstream(name: string, u: UpstreamConfig): UpstreamSpec {
  return {
    name,
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

function mustTemplate(source: string): Template {
  const t = parseTemplate(source);
  if ('error' in t) throw new Error(`unvalidated template: ${t.error}`);
  return t;
}

function mustService(service: string): Origin {
  const o = parseService(service);
  if ('error' in o) throw new Error(`unvalidated service: ${o.error}`);
  return o;
}
