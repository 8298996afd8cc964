/** The TLS settings of a loaded configuration, files read: the listener's and the backends'. */

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
