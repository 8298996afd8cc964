/**
 * An HTTP/2 request as the gateway's pipeline reads an HTTP/1.1 one: the members of
 * `IncomingMessage` the gateway uses, made from a stream's head (server/h2-streams.ts) without
 * node:http2's compatibility request. What a proxy forwarding to HTTP/1.1 backends must
 * translate (RFC 9113 8.3.1, 8.2.3) is done here, once per request, so that no later stage has
 * to know which protocol the client spoke:
 * - `rawHeaders` without the pseudo-headers (`:method`, `:path`...), which no HTTP/1.1 backend
 *   can take, and with `host` from `:authority`;
 * - `headers.host` set from `:authority`;
 * - the Cookie fields a client may split joined into one (`; `), as HTTP/1.1 allows only one;
 * - a body without `content-length` (HTTP/2 frames it itself) announced as
 *   `transfer-encoding: chunked` in `headers`, which is how HTTP/1.1 sends a body of unknown
 *   length, so that the size limit counts it and the backend call streams it.
 */
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { Readable } from 'node:stream';
import { H2Socket } from './h2-socket.js';

const REQUEST = Symbol('portico.h2Request');
type RequestStream = ServerHttp2Stream & { [REQUEST]?: GatewayH2Request };

/**
 * The body is the request itself, a Readable fed from the stream once someone reads it, as
 * node:http2's compatibility request does; unlike it, the request puts two listeners on the
 * stream ('close' and a no-op 'error', one function each for every stream), plus 'data' and
 * 'end' once the body is read and 'timeout' once a timer is set, none of them a closure.
 */
export class GatewayH2Request extends Readable {
  readonly rawHeaders: string[];
  /**
   * A `host` field names another host than `:authority` (RFC 9113 8.3.1: malformed), or comes
   * twice (with or without `:authority`): refused like a bad Host (server/protocol-checks.ts),
   * never resolved by picking one. HTTP/2 field names are lowercase (RFC 9113 8.2.1).
   */
  readonly hostConflict: boolean;
  /** True once the client reset the stream before its body ended. */
  aborted = false;
  private reading = false;
  private streamClosed = false;
  private ownSocket: H2Socket | undefined = undefined;

  constructor(
    readonly stream: ServerHttp2Stream,
    readonly headers: IncomingHttpHeaders,
    rawHeaders: readonly string[],
  ) {
    super({ autoDestroy: false });
    (stream as RequestStream)[REQUEST] = this;
    stream.on('close', onStreamClose);
    // Errors of the stream are the answer's to see (a reset): never thrown, never the body's.
    stream.on('error', ignore);
    const authority = headers[':authority'];
    if (typeof authority === 'string') headers.host = authority;
    if (headers['content-length'] === undefined && !stream.endAfterHeaders) headers['transfer-encoding'] = 'chunked';
    // One pass over the fields for both: the list to forward, and whether its host is in doubt.
    const out: string[] = typeof authority === 'string' ? ['host', authority] : [];
    let cookie: string | undefined;
    let hosts = 0;
    let conflict = false;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!;
      const value = rawHeaders[i + 1]!;
      if (name.charCodeAt(0) === COLON) continue;
      if (name === 'cookie') cookie = cookie === undefined ? value : `${cookie}; ${value}`;
      else if (name !== 'host') out.push(name, value);
      else {
        hosts++;
        if (typeof authority !== 'string') out.push(name, value);
        else if (value.toLowerCase() !== authority.toLowerCase()) conflict = true;
      }
    }
    if (cookie !== undefined) out.push('cookie', cookie);
    this.rawHeaders = out;
    this.hostConflict = conflict || hosts > 1;
  }

  get method(): string | undefined {
    return this.headers[':method'] as string | undefined;
  }
  set method(method: string) {
    this.headers[':method'] = method;
  }
  get url(): string | undefined {
    return this.headers[':path'] as string | undefined;
  }
  set url(url: string) {
    this.headers[':path'] = url;
  }
  get httpVersionMajor(): number {
    return 2;
  }
  get httpVersionMinor(): number {
    return 0;
  }
  get httpVersion(): string {
    return '2.0';
  }
  /** As IncomingMessage's: the body was all read, or will never be (reset, closed). */
  get complete(): boolean {
    return this.aborted || this.readableEnded || this.streamClosed || this.stream.destroyed;
  }
  /** The connection as the request sees it (server/h2-socket.ts), made when first asked for. */
  get socket(): H2Socket {
    return (this.ownSocket ??= new H2Socket(this.stream));
  }
  get connection(): H2Socket {
    return this.socket;
  }

  override _read(): void {
    const { stream } = this;
    if (this.reading) return void process.nextTick(resumeStream, stream);
    this.reading = true;
    stream.on('data', onStreamData);
    stream.on('end', onStreamEnd);
  }

  override pause(): this {
    super.pause();
    this.stream.pause();
    return this;
  }

  override resume(): this {
    super.resume();
    this.stream.resume();
    return this;
  }

  setTimeout(msecs: number, callback?: () => void): this {
    if (this.streamClosed) return this;
    const { stream } = this;
    if (!stream.listeners('timeout').includes(onStreamTimeout)) stream.on('timeout', onStreamTimeout);
    stream.setTimeout(msecs, callback);
    return this;
  }

  /** The stream closed: the body ends here if it had not, and an unread one is dropped. */
  streamClose(): void {
    this.streamClosed = true;
    if (this.stream.aborted && !this.aborted) {
      this.aborted = true;
      this.emit('aborted');
    }
    this.push(null);
    if (!this.reading && !this.readableFlowing) super.resume();
    this.emit('close');
  }
}

// The stream's listeners: one function each for every request, no closure made per stream.
function onStreamClose(this: ServerHttp2Stream): void {
  (this as RequestStream)[REQUEST]?.streamClose();
}
function onStreamData(this: ServerHttp2Stream, chunk: Buffer): void {
  const req = (this as RequestStream)[REQUEST];
  if (req !== undefined && !req.push(chunk)) this.pause();
}
function onStreamEnd(this: ServerHttp2Stream): void {
  (this as RequestStream)[REQUEST]?.push(null);
}
function onStreamTimeout(this: ServerHttp2Stream): void {
  (this as RequestStream)[REQUEST]?.emit('timeout');
}
function resumeStream(stream: ServerHttp2Stream): void {
  stream.resume();
}
function ignore(): void {}

const COLON = 0x3a;
