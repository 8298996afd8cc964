/**
 * What every route of a file is compiled against, compiled anew at every load (./compile.ts keeps
 * the last one's objects when their part of the file and the TLS files read are the same,
 * ./compile-memo.ts): the settings, the upstream TLS, the named upstreams' origins, the consumers;
 * and the server's TLS, which no route depends on.
 */
import { compileClientTls, overGlobal } from './client-tls.js';
import { compileConsumers } from './consumers-file.js';
import { readCaFile, readCertificatePair } from './tls-files.js';
import { parseService, upstreamOrigin } from './syntax/service.js';
import { withTainhaKeys } from './tainha.js';
import type { GatewayFile, UpstreamConfig } from './schema.js';
import type { ClientTls, CompiledTls, Origin, UpstreamSpec } from './types.js';

/** What every route is compiled against, compiled anew at every load (and kept when unchanged). */
export function compileHead(file: GatewayFile, baseDir: string) {
  const settings = withTainhaKeys(file.config);
  const upstreamTls = compileClientTls(settings.upstreamTls, baseDir);
  // One origin per named upstream, shared by every route and rule that names it.
  const named: ReadonlyMap<string, Origin> = new Map(
    Object.entries(file.upstreams ?? {}).map(([name, u]) => {
      const tls =
        u.tls === undefined ? upstreamTls : compileClientTls(overGlobal(u.tls, settings.upstreamTls), baseDir);
      return [name, upstreamOrigin(compileUpstream(name, u, tls))];
    }),
  );
  // Validation put a consumers file's list here (validate.ts): what was checked is what is served.
  return { settings, upstreamTls, named, consumers: compileConsumers(file.consumers ?? []) };
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
