/**
 * Rules on `config.tls` that the schema cannot express: every file readable and PEM, each key
 * the private key of its certificate, a client CA when client certificates are asked for, a
 * warning for a certificate outside its validity period, and no h2c (`http2.cleartext`) on a
 * TLS listener.
 */
import type { AddProblem } from './problems.js';
import { isRecord } from './raw-value.js';
import { readCaFile, readCertificatePair } from './tls-files.js';

/** Checks `config.tls`; files are read relative to `baseDir`. `warn` takes what does not stop a start. */
export function tlsRules(
  raw: Record<string, unknown>,
  baseDir: string,
  at: AddProblem,
  warn: AddProblem,
  now = new Date(),
): void {
  const config = isRecord(raw.config) ? raw.config : undefined;
  const tls = config !== undefined && isRecord(config.tls) ? config.tls : undefined;
  const http2 = config !== undefined && isRecord(config.http2) ? config.http2 : undefined;
  if (tls !== undefined && http2?.cleartext === true)
    at(
      ['config', 'http2', 'cleartext'],
      'config.http2.cleartext: h2c is for a plain listener; with config.tls, HTTP/2 is offered by ALPN (http2.enabled)',
    );
  if (tls === undefined) return;
  const pair = (where: (string | number)[], label: string, value: Record<string, unknown>) => {
    if (typeof value.certFile !== 'string' || typeof value.keyFile !== 'string') return;
    const read = readCertificatePair(value.certFile, value.keyFile, baseDir);
    if (Array.isArray(read)) {
      for (const p of read) at([...where, p.key], `${label}.${p.key}: ${p.message}`);
      return;
    }
    if (read.notAfter < now)
      warn(
        [...where, 'certFile'],
        `${label}.certFile: the certificate expired on ${read.notAfter.toISOString()}; clients will refuse it`,
      );
    else if (read.notBefore > now)
      warn(
        [...where, 'certFile'],
        `${label}.certFile: the certificate is not valid before ${read.notBefore.toISOString()}`,
      );
  };
  pair(['config', 'tls'], 'config.tls', tls);
  if (isRecord(tls.sni))
    for (const [name, entry] of Object.entries(tls.sni))
      if (isRecord(entry)) pair(['config', 'tls', 'sni', name], `config.tls.sni.${name}`, entry);
  if (typeof tls.caFile === 'string') {
    const ca = readCaFile(tls.caFile, baseDir);
    if (Array.isArray(ca)) for (const p of ca) at(['config', 'tls', 'caFile'], `config.tls.caFile: ${p.message}`);
  } else if (tls.clientAuth === 'optional' || tls.clientAuth === 'required')
    at(
      ['config', 'tls', 'clientAuth'],
      `config.tls.clientAuth: ${tls.clientAuth} needs config.tls.caFile, the CAs that sign client certificates`,
    );
  if (typeof tls.redirectPort === 'number' && tls.redirectPort !== 0 && tls.redirectPort === config?.port)
    at(['config', 'tls', 'redirectPort'], 'config.tls.redirectPort: the same port as config.port');
}
