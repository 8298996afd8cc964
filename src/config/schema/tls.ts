/**
 * The TLS sections: `config.tls` (certificates and client certificates of the listener) and
 * `config.upstreamTls` and a named upstream's `tls` (trust of https:// backends, the client
 * certificate presented to them), and what each compiles to with its files read.
 */
import { z } from 'zod';
import { HEADER_NAME } from '../syntax/headers.js';

const pemFile = (what: string) =>
  z.string().min(1).describe(`${what}: a PEM file, relative to this config file; \${VAR} works`);

export const UpstreamTlsSchema = z.strictObject({
  caFile: pemFile('Extra CAs trusted for https:// backends (private CAs); read and checked at load').optional(),
  certFile: pemFile(
    'Client certificate (leaf first) presented to https:// backends that ask for one (mTLS); with keyFile',
  ).optional(),
  keyFile: pemFile('Private key of certFile').optional(),
  rejectUnauthorized: z.boolean().default(true).describe('Verify backend certificates; false only for development'),
});

/** A named upstream's `tls`: each key it leaves out is `config.upstreamTls`'s (certFile and keyFile as a pair). */
export const UpstreamTargetsTlsSchema = z.strictObject({
  caFile: pemFile('Extra CAs trusted for these targets; default config.upstreamTls.caFile').optional(),
  certFile: pemFile(
    'Client certificate presented to these targets (mTLS), with keyFile; default config.upstreamTls.certFile',
  ).optional(),
  keyFile: pemFile('Private key of certFile').optional(),
  rejectUnauthorized: z
    .boolean()
    .optional()
    .describe("Verify the targets' certificates; default config.upstreamTls.rejectUnauthorized"),
});

export const TlsSchema = z.strictObject({
  certFile: pemFile('Certificate chain of the listener (leaf first)'),
  keyFile: pemFile('Private key of certFile'),
  minVersion: z.enum(['TLSv1.2', 'TLSv1.3']).default('TLSv1.2').describe('Oldest TLS version accepted'),
  sni: z
    .record(
      z.string().min(1),
      z.strictObject({ certFile: pemFile('Certificate chain'), keyFile: pemFile('Private key') }),
    )
    .optional()
    .describe('More certificates by server name (exact, or *.example.com for one label); certFile is the default'),
  caFile: pemFile('CAs that sign client certificates (mTLS)').optional(),
  clientAuth: z
    .enum(['none', 'optional', 'required'])
    .default('none')
    .describe('Client certificates: none, optional (verified when sent), required (the handshake fails without one)'),
  clientSubjectHeader: z
    .string()
    .regex(HEADER_NAME, 'a header name')
    .optional()
    .describe(
      'Send the verified client certificate subject (CN=...,O=...) to backends in this header; clients cannot set it',
    ),
  redirectPort: z
    .int()
    .min(0)
    .max(65535)
    .optional()
    .describe('A plain-HTTP port that answers 308 to the https:// URL (/health and /ready are served there too)'),
  hstsMaxAgeSec: z.int().min(0).optional().describe('Send Strict-Transport-Security: max-age=N on HTTPS answers'),
});

/**
 * The TLS of the gateway's calls to https:// backends (`config.upstreamTls`, a named upstream's
 * `tls`), its files read and checked at load.
 */
export interface ClientTls {
  /** Extra CAs trusted besides the system's. */
  readonly ca: Buffer | undefined;
  /** The client certificate presented to backends that ask for one (mTLS), and its key. */
  readonly cert: Buffer | undefined;
  readonly key: Buffer | undefined;
  readonly rejectUnauthorized: boolean;
  /** Equal for the same settings and file contents: a reload that changes it gives the backends new pools. */
  readonly id: string;
}

/** `config.tls` with its files read (config/tls-files.ts). */
export interface CompiledTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly minVersion: 'TLSv1.2' | 'TLSv1.3';
  /** Certificates by server name: exact names, or `*.example.com`. */
  readonly sni: readonly { readonly name: string; readonly cert: Buffer; readonly key: Buffer }[];
  readonly ca: Buffer | undefined;
  readonly clientAuth: 'none' | 'optional' | 'required';
  readonly redirectPort: number | undefined;
  readonly hstsMaxAgeSec: number | undefined;
}
