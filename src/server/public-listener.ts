/**
 * The public listener, chosen at start by `config.tls` and `config.http2` (docs/tls.md):
 * - plain HTTP/1.1 (node:http);
 * - plain with `http2.cleartext`: HTTP/1.1 and h2c by prior knowledge on the same port, told
 *   apart by the first bytes (the HTTP/2 connection preface), so that probes and old clients
 *   keep working behind a load balancer that speaks h2c;
 * - TLS with `http2.enabled: false`: HTTPS/1.1 (node:https);
 * - TLS: ALPN `h2` then `http/1.1` on one port (node:http2's secure server with allowHTTP1).
 *
 * In every case `server` is where HTTP/1.1 connections raise the events the gateway listens to
 * ('upgrade', 'clientError', 'connect') and where the HTTP/1.1 limits are set (server/limits.ts).
 * HTTP/2 requests reach the same handler through node:http2's core stream API, as the gateway's
 * own request and response objects (server/h2-streams.ts). HTTP/2 connections are tracked here:
 * closed after `keepAliveMs()` without a frame, asked to finish with GOAWAY on drain, destroyed at
 * the end.
 */
import { createServer, Server, type RequestListener, type ServerOptions } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import {
  createSecureServer,
  createServer as createCleartextH2Server,
  type Http2SecureServer,
  type Http2Server,
  type Http2Session,
  type SecureServerOptions,
} from 'node:http2';
import type { Socket } from 'node:net';
import type { GatewaySettings } from '../config/schema.js';
import { GatewayResponse } from './gateway-response.js';
import { loggedH2Response } from './h2-response.js';
import type { Logger } from '../observability/logger.js';
import { serveStreams } from './h2-streams.js';
import { withHsts, type TlsListener } from './tls-listener.js';
import type { ResponseClass } from './socket-response.js';

export interface PublicListenerOptions {
  readonly handler: RequestListener;
  /** Options of the HTTP/1.1 server (server/limits.ts). */
  readonly httpOptions: ServerOptions;
  readonly tls: TlsListener | undefined;
  readonly http2: GatewaySettings['http2'];
  /** `limits.maxHeaderBytes`: also the HTTP/2 header list size announced to clients. */
  readonly maxHeaderBytes: number;
  /** Idle time after which an HTTP/2 connection closes; read for each new connection. */
  keepAliveMs(): number;
  /** Where an HTTP/2 answer whose head Node refuses is logged (server/gateway-response.ts). */
  readonly logger: Logger;
}

export interface PublicListener {
  readonly server: Server;
  /** The class of HTTP/1.1 responses (HSTS over TLS): upgrades get one bound to their socket. */
  readonly Response: ResponseClass;
  /** GOAWAY on every HTTP/2 connection: streams in flight finish, no new ones start. */
  closeSessions(): void;
  /** Closes every connection now, HTTP/1.1 and HTTP/2. */
  closeAllConnections(): void;
}

/** What clients can speak on the listener, as ALPN names them (the start log shows it). */
export function listenerProtocols(hasTls: boolean, http2: GatewaySettings['http2']): string[] {
  if (hasTls) return http2.enabled ? ['h2', 'http/1.1'] : ['http/1.1'];
  return http2.cleartext ? ['h2c', 'http/1.1'] : ['http/1.1'];
}

/** HTTP/1.1 keeps the first 1,000 header fields (server/http-server.ts); HTTP/2 the same. */
const MAX_HEADER_FIELDS = 1_000;

export function createPublicListener(options: PublicListenerOptions): PublicListener {
  const { handler, httpOptions, tls, http2 } = options;
  const h2Response = loggedH2Response(options.logger);
  const sessions = new Set<Http2Session>();
  const track = (h2: Http2Server | Http2SecureServer) =>
    h2.on('session', (session: Http2Session) => {
      sessions.add(session);
      session.once('close', () => sessions.delete(session));
      session.setTimeout(options.keepAliveMs(), () => session.close());
    });
  const h2Options = {
    settings: { maxConcurrentStreams: http2.maxConcurrentStreams, maxHeaderListSize: options.maxHeaderBytes },
    maxHeaderListPairs: MAX_HEADER_FIELDS,
  } as SecureServerOptions;
  const H2Response = tls === undefined ? h2Response : withHsts(h2Response, tls.hsts);
  const http1Response = tls === undefined ? GatewayResponse : withHsts(GatewayResponse, tls.hsts);

  let server: Server;
  if (tls === undefined) {
    server = createServer(httpOptions, handler);
    if (http2.cleartext) {
      const h2 = createCleartextH2Server(h2Options);
      serveStreams(h2, handler, H2Response);
      track(h2);
      acceptPriorKnowledge(server, h2);
    }
  } else if (!http2.enabled) {
    server = createHttpsServer(
      { ...httpOptions, ServerResponse: http1Response, ...tls.options, ALPNProtocols: ['http/1.1'] },
      handler,
    ) as unknown as Server;
  } else {
    // allowHTTP1 adds `http/1.1` after `h2` to the ALPN list; its requests come as 'request'.
    const h2 = createSecureServer(
      {
        ...tls.options,
        ...h2Options,
        allowHTTP1: true,
        noDelay: true,
        Http1ServerResponse: http1Response,
      },
      handler as unknown as Parameters<typeof createSecureServer>[1],
    );
    serveStreams(h2, handler, H2Response);
    // Read by Node when the server starts listening, as for an http.Server.
    Object.assign(h2, { connectionsCheckingInterval: httpOptions.connectionsCheckingInterval });
    track(h2);
    server = h2 as unknown as Server;
  }

  return {
    server,
    Response: http1Response,
    closeSessions: () => {
      for (const session of sessions) session.close();
    },
    closeAllConnections: () => {
      // An http2 secure server has no closeAllConnections of its own; node:http's works on the
      // HTTP/1.1 connections it tracks for it.
      Server.prototype.closeAllConnections.call(server);
      for (const session of sessions) session.destroy();
    },
  };
}

/** The first bytes of every HTTP/2 connection (RFC 9113 3.4). */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/**
 * Puts a look at the first bytes of each connection of `h1` before node:http takes it: the
 * HTTP/2 preface hands the connection to `h2`, anything else to node:http. The bytes read are
 * put back for whichever reads next. A connection that sends nothing is closed after the
 * server's `headersTimeout`, as node:http would.
 */
function acceptPriorKnowledge(h1: Server, h2: Http2Server): void {
  const serveHttp1 = h1.listeners('connection')[0] as (this: Server, socket: Socket) => void;
  h1.removeListener('connection', serveHttp1);
  h1.prependListener('connection', (socket: Socket) => {
    let seen: Buffer | undefined;
    const onError = () => socket.destroy();
    const onTimeout = () => socket.destroy();
    const onEnd = () => socket.destroy();
    const onReadable = () => {
      const chunk = socket.read() as Buffer | null;
      if (chunk === null) return;
      seen = seen === undefined ? chunk : Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      const isPreface = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (isPreface && seen.length < PREFACE.length) return;
      socket.off('readable', onReadable);
      socket.off('error', onError);
      socket.off('timeout', onTimeout);
      socket.off('end', onEnd);
      socket.setTimeout(0);
      socket.unshift(seen);
      if (isPreface) {
        // node:http keeps a connection open after the client's FIN (allowHalfOpen); an HTTP/2
        // session learns that its client is gone only when the socket closes.
        socket.allowHalfOpen = false;
        h2.emit('connection', socket);
      } else serveHttp1.call(h1, socket);
    };
    socket.on('error', onError);
    socket.on('timeout', onTimeout);
    socket.on('end', onEnd);
    socket.setTimeout(h1.headersTimeout);
    socket.on('readable', onReadable);
  });
}
