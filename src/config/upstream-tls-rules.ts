/**
 * Rules on the TLS to backends that the schema cannot express (`config.upstreamTls`, a named
 * upstream's `tls`): a client certificate comes with its key (both or neither), every file is
 * readable PEM, the key belongs to the certificate, the CA file holds a certificate. A client
 * certificate outside its validity period is a warning: backends will refuse it, the gateway
 * still starts.
 */
import type { AddProblem } from './problems.js';
import { isRecord } from './raw-value.js';
import { readCaFile, readCertificatePair } from './tls-files.js';

/** Checks `config.upstreamTls` and every `upstreams.NAME.tls`; files are read relative to `baseDir`. */
export function upstreamTlsRules(
  raw: Record<string, unknown>,
  baseDir: string,
  at: AddProblem,
  warn: AddProblem,
  now = new Date(),
): void {
  const config = isRecord(raw.config) ? raw.config : {};
  if (isRecord(config.upstreamTls))
    sectionRules(config.upstreamTls, ['config', 'upstreamTls'], 'config.upstreamTls', { baseDir, at, warn, now });
  const upstreams = isRecord(raw.upstreams) ? raw.upstreams : {};
  for (const [name, upstream] of Object.entries(upstreams)) {
    if (!isRecord(upstream) || !isRecord(upstream.tls)) continue;
    const where = ['upstreams', name, 'tls'];
    const label = `upstreams.${name}.tls`;
    sectionRules(upstream.tls, where, label, { baseDir, at, warn, now });
    const targets = Array.isArray(upstream.targets) ? upstream.targets : [];
    const text = (t: unknown) => (typeof t === 'string' ? t : isRecord(t) ? t.target : undefined);
    if (targets.length > 0 && !targets.some((t) => /^https:\/\//i.test(String(text(t)))))
      warn(where, `${label}: every target is plain HTTP; TLS settings apply to https:// targets only`);
  }
}

interface Context {
  readonly baseDir: string;
  readonly at: AddProblem;
  readonly warn: AddProblem;
  readonly now: Date;
}

function sectionRules(tls: Record<string, unknown>, where: string[], label: string, c: Context): void {
  const { certFile, keyFile, caFile } = tls;
  if (typeof certFile === 'string' && typeof keyFile !== 'string')
    c.at(
      [...where, 'certFile'],
      `${label}.certFile: a client certificate needs keyFile, its private key`,
      'set keyFile beside certFile, or remove certFile',
    );
  else if (typeof keyFile === 'string' && typeof certFile !== 'string')
    c.at(
      [...where, 'keyFile'],
      `${label}.keyFile: a private key needs certFile, the client certificate it belongs to`,
      'set certFile beside keyFile, or remove keyFile',
    );
  else if (typeof certFile === 'string' && typeof keyFile === 'string') {
    const pair = readCertificatePair(certFile, keyFile, c.baseDir);
    if (Array.isArray(pair)) for (const p of pair) c.at([...where, p.key], `${label}.${p.key}: ${p.message}`);
    else if (pair.notAfter < c.now)
      c.warn(
        [...where, 'certFile'],
        `${label}.certFile: the certificate expired on ${pair.notAfter.toISOString()}; backends will refuse it`,
      );
    else if (pair.notBefore > c.now)
      c.warn(
        [...where, 'certFile'],
        `${label}.certFile: the certificate is not valid before ${pair.notBefore.toISOString()}`,
      );
  }
  if (typeof caFile === 'string') {
    const ca = readCaFile(caFile, c.baseDir);
    if (Array.isArray(ca)) for (const p of ca) c.at([...where, 'caFile'], `${label}.caFile: ${p.message}`);
  }
}
