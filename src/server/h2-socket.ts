/**
 * `req.socket` of an HTTP/2 request (server/http2-request.ts): the connection's identity (address,
 * TLS, client certificate) read from the connection's socket, and its life (`close`, `destroy`,
 * `destroyed`) from the request's stream, as node:http2's compatibility request gives it: what
 * waits for the socket's 'close' waits for this request's end, not for the whole connection's.
 */
import type { Http2Session, ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import type { PeerCertificate, TLSSocket } from 'node:tls';

type Listener = (...args: unknown[]) => void;

export class H2Socket {
  constructor(private readonly stream: ServerHttp2Stream) {}

  /** The connection's socket; the session's guarded view of it once the session is gone. */
  private get connection(): TLSSocket {
    const session = this.stream.session;
    return (session === undefined ? {} : (connectionSocket(session) ?? session.socket)) as TLSSocket;
  }

  get remoteAddress(): string | undefined {
    return this.connection.remoteAddress;
  }
  get remotePort(): number | undefined {
    return this.connection.remotePort;
  }
  get remoteFamily(): string | undefined {
    return this.connection.remoteFamily;
  }
  get localAddress(): string | undefined {
    return this.connection.localAddress;
  }
  get localPort(): number | undefined {
    return this.connection.localPort;
  }
  get encrypted(): boolean | undefined {
    return this.connection.encrypted;
  }
  get authorized(): boolean | undefined {
    return this.connection.authorized;
  }
  get authorizationError(): Error | undefined {
    return this.connection.authorizationError;
  }
  get servername(): string | false | null | undefined {
    return this.connection.servername;
  }
  get alpnProtocol(): string | false | null | undefined {
    return this.connection.alpnProtocol;
  }
  getPeerCertificate(detailed?: boolean): PeerCertificate | undefined {
    return this.connection.getPeerCertificate?.(detailed as true);
  }
  getPeerX509Certificate(): ReturnType<TLSSocket['getPeerX509Certificate']> {
    return this.connection.getPeerX509Certificate?.();
  }
  /** Applies to the whole connection, as it does through node:http2's compatibility request. */
  setNoDelay(noDelay?: boolean): this {
    const session = this.stream.session;
    const socket = session === undefined ? undefined : connectionSocket(session);
    socket?.setNoDelay(noDelay);
    return this;
  }

  get destroyed(): boolean {
    return this.stream.destroyed;
  }
  destroy(err?: Error): this {
    this.stream.destroy(err);
    return this;
  }
  on(event: string, listener: Listener): this {
    this.stream.on(event, listener);
    return this;
  }
  once(event: string, listener: Listener): this {
    this.stream.once(event, listener);
    return this;
  }
  off(event: string, listener: Listener): this {
    this.stream.off(event, listener);
    return this;
  }
  removeListener(event: string, listener: Listener): this {
    return this.off(event, listener);
  }
}

/**
 * The socket under a session. node:http2 hands out only a guarded view of it (`session.socket`,
 * which refuses `setNoDelay` and more); the session keeps the socket itself under a symbol
 * described `socket`, found once.
 */
let socketKey: symbol | undefined | null = null;
function connectionSocket(session: Http2Session): Socket | undefined {
  if (socketKey === null) socketKey = Object.getOwnPropertySymbols(session).find((s) => s.description === 'socket');
  return socketKey === undefined ? undefined : (session as unknown as Record<symbol, Socket | undefined>)[socketKey];
}
