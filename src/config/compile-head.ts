/**
 * The origins every route of a file is compiled against, and the server's TLS: both read their
 * files at every load. ./compile.ts compiles the origins first, for the identities of the upstream
 * TLS files they read, and keeps the last load's when those and the rest of the file are the same
 * (./compile-memo.ts).
 */
import { compileClientTls, overGlobal } from './client-tls.js';
import { readCaFile, readCertificatePair } from './tls-files.js';
import { parseService, upstreamOrigin } from './syntax/service.js';
import type { GatewayFile, UpstreamConfig } from './schema.js';
import type { ClientTls, CompiledTls, Origin, UpstreamSpec } from './types.js';

/** The TLS of https:// services, and one origin per named upstream, shared by every route and rule that names it. */
export function compileOrigins(
  file: GatewayFile,
  baseDir: string,
): { readonly upstreamTls: ClientTls | undefined; readonly named: ReadonlyMap<string, Origin> } {
  const global = file.config.upstreamTls;
  const upstreamTls = compileClientTls(global, baseDir);
  const named = new Map(
    Object.entries(file.upstreams ?? {}).map(([name, u]) => {
      const tls = u.tls === undefined ? upstreamTls : compileClientTls(overGlobal(u.tls, global), baseDir);
      return [name, upstreamOrigin(compileUpstream(name, u, tls))];
    }),
  );
  return { upstreamTls, named };
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

export function compileTls(t: NonNullable<GatewayFile['config']['tls']>, baseDir: string): CompiledTls {
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

export const mustService = (service: string): Origin => must<Origin>(parseService(service), 'service');

/** What validation already parsed without error; throws only on a bug. */
export function must<T extends object>(result: T | { readonly error: string }, what: string): T {
  if ('error' in result) throw new Error(`unvalidated ${what}: ${result.error}`);
  return result as T;
}
