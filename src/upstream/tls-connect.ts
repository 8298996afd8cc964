/**
 * The TLS options of connections to an https:// backend, from `config.upstreamTls` or a named
 * upstream's `tls` (docs/upstreams.md "Client certificates to backends"): the system CAs plus the
 * configured ones, verification, the client certificate, and the server name of a target that
 * is an address resolved from a host name.
 */
import { rootCertificates } from 'node:tls';
import type { ClientTls, Origin } from '../config/types.js';
import type { TlsConnectOptions } from './types.js';

/** Undefined for http://; for https:// without settings, the defaults (system CAs, verified). */
export function tlsConnectOptions(origin: Origin, tls: ClientTls | undefined): TlsConnectOptions | undefined {
  if (origin.protocol !== 'https:') return undefined;
  return {
    rejectUnauthorized: tls?.rejectUnauthorized ?? true,
    ...(tls?.ca === undefined ? {} : { ca: [...rootCertificates, tls.ca.toString('utf8')] }),
    ...(tls?.cert === undefined || tls.key === undefined ? {} : { cert: tls.cert, key: tls.key }),
    ...(origin.serverName === undefined ? {} : { servername: origin.serverName }),
  };
}
