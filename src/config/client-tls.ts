/**
 * The TLS of calls to https:// backends as served (`config.upstreamTls`, a named upstream's
 * `tls`): files read (validation checked them, upstream-tls-rules.ts) and an identity that tells
 * a reload whether the backends' connections must change.
 */
import { createHash } from 'node:crypto';
import type { GatewaySettings, UpstreamConfig } from './schema.js';
import type { ClientTls } from './types.js';
import { readCaFile, readCertificatePair } from './tls-files.js';

type UpstreamTlsConfig = GatewaySettings['upstreamTls'];

/**
 * An upstream's `tls` over `config.upstreamTls`: each key it leaves out is the global one, and
 * the client certificate is its own pair when it names one, else the global pair (never half of each).
 */
export function overGlobal(own: NonNullable<UpstreamConfig['tls']>, global: UpstreamTlsConfig): UpstreamTlsConfig {
  const pair = own.certFile !== undefined || own.keyFile !== undefined ? own : global;
  return {
    caFile: own.caFile ?? global.caFile,
    certFile: pair.certFile,
    keyFile: pair.keyFile,
    rejectUnauthorized: own.rejectUnauthorized ?? global.rejectUnauthorized,
  };
}

/** Reads the files of a backend TLS section (validation checked them) and gives the result its identity. */
export function compileClientTls(t: UpstreamTlsConfig, baseDir: string): ClientTls {
  const ca = t.caFile === undefined ? undefined : readCaFile(t.caFile, baseDir);
  if (Array.isArray(ca)) throw new Error(`unvalidated TLS files: ${ca.map((p) => p.message).join('; ')}`);
  const pair =
    t.certFile === undefined || t.keyFile === undefined
      ? undefined
      : readCertificatePair(t.certFile, t.keyFile, baseDir);
  if (Array.isArray(pair)) throw new Error(`unvalidated TLS files: ${pair.map((p) => p.message).join('; ')}`);
  const hash = createHash('sha256').update(t.rejectUnauthorized ? 'verify\0' : 'trust\0');
  for (const part of [ca, pair?.cert, pair?.key]) hash.update(part ?? '').update('\0');
  return Object.freeze({
    ca,
    cert: pair?.cert,
    key: pair?.key,
    rejectUnauthorized: t.rejectUnauthorized,
    id: hash.digest('base64url'),
  });
}
