/**
 * The listener's TLS files (`config.tls`, docs/tls.md): read relative to the config file, and
 * checked the way a handshake would fail on them: a file that is missing or not PEM, a key that
 * does not belong to its certificate, a client-CA file without a certificate. An expired or not
 * yet valid certificate is a warning: clients will refuse it, but the gateway can still start.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

/** A certificate and its key, read and checked. */
export interface CertificatePair {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** The leaf's validity, for the expiry warning. */
  readonly notAfter: Date;
  readonly notBefore: Date;
}

/** A problem with one file: which key of the pair, and what. */
export interface TlsFileProblem {
  readonly key: 'certFile' | 'keyFile' | 'caFile';
  readonly message: string;
}

export function tlsPath(file: string, baseDir: string): string {
  return isAbsolute(file) ? file : resolve(baseDir, file);
}

/** Reads a certificate and its key; problems instead when they cannot serve a handshake. */
export function readCertificatePair(
  certFile: string,
  keyFile: string,
  baseDir: string,
): CertificatePair | TlsFileProblem[] {
  const problems: TlsFileProblem[] = [];
  const cert = readPem(certFile, baseDir, 'certFile', problems);
  const key = readPem(keyFile, baseDir, 'keyFile', problems);
  if (cert === undefined || key === undefined) return problems;
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    return [{ key: 'certFile', message: `"${certFile}" holds no valid certificate (${(err as Error).message})` }];
  }
  try {
    if (!leaf.checkPrivateKey(createPrivateKey(key)))
      return [{ key: 'keyFile', message: `"${keyFile}" is not the private key of the certificate in "${certFile}"` }];
  } catch (err) {
    return [{ key: 'keyFile', message: `"${keyFile}" holds no valid private key (${(err as Error).message})` }];
  }
  return { cert, key, notAfter: new Date(leaf.validTo), notBefore: new Date(leaf.validFrom) };
}

/** Reads the client CA file; a problem instead when it holds no certificate. */
export function readCaFile(caFile: string, baseDir: string): Buffer | TlsFileProblem[] {
  const problems: TlsFileProblem[] = [];
  const ca = readPem(caFile, baseDir, 'caFile', problems);
  if (ca === undefined) return problems;
  try {
    new X509Certificate(ca);
  } catch (err) {
    return [{ key: 'caFile', message: `"${caFile}" holds no valid certificate (${(err as Error).message})` }];
  }
  return ca;
}

function readPem(
  file: string,
  baseDir: string,
  key: TlsFileProblem['key'],
  problems: TlsFileProblem[],
): Buffer | undefined {
  try {
    const data = readFileSync(tlsPath(file, baseDir));
    if (!data.includes('-----BEGIN ')) {
      problems.push({ key, message: `"${file}" is not a PEM file (no -----BEGIN line)` });
      return undefined;
    }
    return data;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    problems.push({
      key,
      message: `cannot read "${file}": ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (err as Error).message}`,
    });
    return undefined;
  }
}
