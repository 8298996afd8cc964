/**
 * The listener's TLS (docs/tls.md): the server options of `config.tls`, the certificate chosen by
 * server name (SNI), the swap of certificates on reload (new handshakes get the new ones, open
 * connections keep theirs), HSTS on HTTPS answers, and the plain-HTTP redirect listener.
 */
import {
  createSecureContext,
  type SecureContext,
  type Server as TlsServer,
  type TLSSocket,
  type TlsOptions,
} from 'node:tls';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { CompiledTls } from '../config/types.js';
import { sendError } from '../response/send-error.js';
import { hostRefusal } from './protocol-checks.js';
import { requestHostName } from '../router/host-name.js';

/** What a reload may change on a running TLS listener. */
export interface TlsListener {
  /** Options for the TLS server (server/public-listener.ts adds the ALPN protocols). */
  readonly options: TlsOptions;
  /** The `Strict-Transport-Security` value of HTTPS answers; undefined without `hstsMaxAgeSec`. */
  hsts(): string | undefined;
  /** Takes a reloaded `config.tls`: certificates, client CAs and policy, and HSTS for what comes next. */
  apply(server: TlsServer, next: CompiledTls): void;
  /**
   * True when the listener has per-host certificates (`tls.sni`) and the request's host would
   * get another certificate than the connection's server name got: the connection is not
   * authoritative for that host, and the answer is 421 (RFC 9110 15.5.20).
   */
  misdirected(req: IncomingMessage): boolean;
}

export function createTlsListener(initial: CompiledTls): TlsListener {
  let byName = contextsByName(initial);
  let hsts = hstsValue(initial);
  return {
    options: {
      ...contextOptions(initial),
      SNICallback: (servername, done) => done(null, contextFor(byName, servername)),
    },
    hsts: () => hsts,
    apply(server, next) {
      const options = contextOptions(next);
      server.setSecureContext(options);
      // setSecureContext leaves the client-certificate policy alone: node:tls reads it from these
      // two server fields for every new connection, so setting them applies it from the next one.
      Object.assign(server, { requestCert: options.requestCert, rejectUnauthorized: options.rejectUnauthorized });
      byName = contextsByName(next);
      hsts = hstsValue(next);
    },
    misdirected(req) {
      if (byName.size === 0) return false;
      const servername = (req.socket as TLSSocket).servername;
      const connection = contextFor(byName, typeof servername === 'string' ? servername : '');
      return contextFor(byName, requestHostName(req.headers.host)) !== connection;
    },
  };
}

/** A response class whose `writeHead` can be given a header first (HTTP/1.1 or HTTP/2). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- TypeScript's rule for mixin constructors
type ResponseClass = new (...args: any[]) => {
  readonly headersSent: boolean;
  setHeader(name: string, value: string): unknown;
  writeHead(...args: never[]): unknown;
};

/**
 * The response class of an HTTPS listener, `Base` being GatewayResponse (HTTP/1.1) or
 * GatewayH2Response: every answer carries HSTS when configured.
 */
export function withHsts<T extends ResponseClass>(Base: T, hsts: () => string | undefined): T {
  return class HstsResponse extends Base {
    override writeHead(...args: never[]): unknown {
      const value = hsts();
      if (value !== undefined && !this.headersSent) this.setHeader('strict-transport-security', value);
      return super.writeHead(...args);
    }
  };
}

/**
 * The redirect listener's handler: 308 to the same path on https://, the port being `httpsPort`
 * (left out when 443); `/health` and `/ready` are served by `serve`, as load balancers and
 * probes often use the plain port.
 */
export function redirectToHttps(httpsPort: () => number, serve: RequestListener): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    const bare = path.split('?')[0];
    if (bare === '/health' || bare === '/ready') return serve(req, res);
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    // The Location is built from the Host: one, valid, and of the characters a name or address has.
    if (hostRefusal(req) !== undefined || host === '' || !/^[A-Za-z0-9.\-[\]:]+$/.test(host)) {
      req.resume();
      return sendError(res, 'GW_BAD_HOST', { connection: 'close' });
    }
    const port = httpsPort();
    const location = `https://${host}${port === 443 ? '' : `:${port}`}${path}`;
    req.resume();
    res.writeHead(308, { location, 'content-length': '0', connection: 'close' });
    res.end();
  };
}

function contextOptions(tls: CompiledTls): TlsOptions {
  return {
    cert: tls.cert,
    key: tls.key,
    minVersion: tls.minVersion,
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    requestCert: tls.clientAuth !== 'none',
    rejectUnauthorized: tls.clientAuth === 'required',
  };
}

function contextsByName(tls: CompiledTls): Map<string, SecureContext> {
  const base = contextOptions(tls);
  return new Map(tls.sni.map((s) => [s.name, createSecureContext({ ...base, cert: s.cert, key: s.key })]));
}

/** The context of an exact name, else of `*.` and its parent domain; undefined: the default one. */
function contextFor(byName: ReadonlyMap<string, SecureContext>, servername: string): SecureContext | undefined {
  const name = servername.toLowerCase();
  const exact = byName.get(name);
  if (exact !== undefined) return exact;
  const dot = name.indexOf('.');
  return dot < 0 ? undefined : byName.get(`*${name.slice(dot)}`);
}

function hstsValue(tls: CompiledTls): string | undefined {
  return tls.hstsMaxAgeSec === undefined ? undefined : `max-age=${tls.hstsMaxAgeSec}`;
}
