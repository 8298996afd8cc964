/**
 * The answer to an HTTP/2 request, written straight onto its stream (`stream.respond`, then the
 * stream's own writes): the members of `ServerResponse` the gateway's writers use, without
 * node:http2's compatibility response. That one is a Stream of its own with five listeners on
 * every stream (two of them closures) and its own copy of the head; this one puts one listener
 * on the stream ('close', shared by every response), one more when someone waits for 'drain',
 * and asks Node for trailers only on a gRPC call or a gRPC answer, the only answers the gateway
 * adds trailers to (endpoints/grpc.ts, response/grpc-status.ts): every other answer ends with its
 * last DATA frame rather than an empty one sent when Node asks for the trailers.
 *
 * Like GatewayResponse, it puts `X-Request-ID` on every head. It drops the header fields HTTP/2
 * forbids (RFC 9113 8.2.2): the gateway's HTTP/1.1 writers may add `connection: close` (a
 * refusal, a drain) or `upgrade` (426), which would make Node refuse the whole head; a drain
 * closes HTTP/2 connections with GOAWAY instead (server/public-listener.ts). It is also the one
 * place where a head Node refuses (a backend field HTTP/1.1 allows, such as `http2-settings`, or
 * a single-value field on two lines) is caught, whichever writer wrote it: answered 502 instead.
 */
import { type OutgoingHttpHeaders, type ServerHttp2Stream, type ServerStreamResponseOptions } from 'node:http2';
import type { ServerResponse } from 'node:http';
import type { Logger } from '../observability/logger.js';
import { errorResponse } from '../response/send-error.js';
import { answersAsGrpc, isGrpcContentType, sendGrpcError } from '../response/grpc-status.js';
import type { ErrorHook, ErrorHookSlot } from '../response/error-hooks.js';
import type { CompressionSlot } from '../response/compression/answer-slot.js';
import { firstString, headOf, HEADERS_SENT, type Headers } from './h2-head.js';
import { H2Fields } from './h2-fields.js';

const RESPONSE = Symbol('portico.h2Response');
type AnsweredStream = ServerHttp2Stream & { [RESPONSE]?: GatewayH2Response };

export class GatewayH2Response extends H2Fields implements ErrorHookSlot, CompressionSlot {
  requestId: string | undefined = undefined;
  errorHook: ErrorHook | undefined = undefined;
  /** The answer's compression on a route that compresses (response/compression/compress-response.ts): a field, like errorHook. */
  compressedAnswer: object | undefined = undefined;
  statusCode = 200;
  readonly writable = true;
  /** Set by `end()`: only the gateway ends an answer. */
  writableEnded = false;
  /** Whether the stream closed: 'finish' and 'close' were emitted. */
  private closed = false;
  /** Whether the stream's 'drain' is passed on (added with the first 'drain' listener). */
  private drains = false;

  /** `grpcCall`: the request is a gRPC call, whose answer may end with trailers whatever its head says. */
  constructor(
    readonly stream: ServerHttp2Stream,
    private readonly grpcCall = false,
  ) {
    super();
    (stream as AnsweredStream)[RESPONSE] = this;
    stream.on('close', onStreamClose);
  }

  override get headersSent(): boolean {
    return this.stream.headersSent;
  }
  get finished(): boolean {
    return this.writableEnded;
  }
  get writableFinished(): boolean {
    return this.stream.writableFinished;
  }
  get writableLength(): number {
    return this.stream.writableLength;
  }
  get writableHighWaterMark(): number {
    return this.stream.writableHighWaterMark;
  }
  get destroyed(): boolean {
    return this.stream.destroyed;
  }
  /** HTTP/2 has no reason phrase. */
  get statusMessage(): string {
    return '';
  }
  set statusMessage(_: string) {}

  override on(event: string | symbol, listener: (...args: unknown[]) => void): this {
    if (event === 'drain' && !this.drains) this.passDrain();
    return super.on(event, listener);
  }
  override addListener(event: string | symbol, listener: (...args: unknown[]) => void): this {
    return this.on(event, listener);
  }
  override once(event: string | symbol, listener: (...args: unknown[]) => void): this {
    if (event === 'drain' && !this.drains) this.passDrain();
    return super.once(event, listener);
  }
  private passDrain(): void {
    this.drains = true;
    this.stream.on('drain', onStreamDrain);
  }

  /**
   * Sends the head. `respond` copies it and checks its fields (names, connection-specific
   * fields, single-value fields), so a writer's shared headers object is never modified.
   */
  writeHead(statusCode: number, reasonOrHeaders?: string | Headers, maybeHeaders?: Headers): this {
    const { stream } = this;
    if (stream.destroyed || stream.closed) return this;
    const headers = typeof reasonOrHeaders === 'string' ? maybeHeaders : reasonOrHeaders;
    try {
      if (stream.headersSent) throw Object.assign(new Error('Response has already been initiated.'), HEADERS_SENT);
      const head = headOf(this.fields, statusCode, headers, this.requestId);
      this.statusCode = statusCode;
      this.respond(head, this.writableEnded);
      return this;
    } catch (err) {
      this.headRefused(err);
      return this;
    }
  }

  /** The head as `stream.respond` takes it: trailers asked for on a gRPC call or answer only. */
  private respond(head: OutgoingHttpHeaders, endStream: boolean): void {
    const { stream } = this;
    const trailers = this.grpcCall || isGrpcContentType(firstString(head['content-type']));
    const options: ServerStreamResponseOptions & { sendDate: boolean } = {
      endStream,
      waitForTrailers: trailers,
      // Read by `respond` as the compatibility API passes it (not in the typings).
      sendDate: this.sendDate,
    };
    stream.respond(head, options);
    if (trailers) stream.once('wantTrailers', onWantTrailers);
  }

  flushHeaders(): void {
    if (!this.closed && !this.stream.headersSent) this.writeHead(this.statusCode);
  }

  write(chunk: unknown, encodingOrCb?: unknown, cb?: unknown): boolean {
    const { stream } = this;
    const done = (typeof encodingOrCb === 'function' ? encodingOrCb : cb) as ((err?: Error | null) => void) | undefined;
    if (this.writableEnded || this.closed) {
      if (done !== undefined) process.nextTick(done, new Error('write after end'));
      return false;
    }
    if (!stream.headersSent) this.writeHead(this.statusCode);
    // A HEAD request, 204 or 304: the head ended the stream, the body is not sent (as HTTP/1.1).
    if (stream.writableEnded || stream.destroyed) {
      if (done !== undefined) process.nextTick(done);
      return true;
    }
    const encoding = typeof encodingOrCb === 'string' ? (encodingOrCb as BufferEncoding) : undefined;
    return encoding === undefined ? stream.write(chunk, done) : stream.write(chunk, encoding, done);
  }

  end(chunk?: unknown, encodingOrCb?: unknown, cb?: unknown): this {
    const { stream } = this;
    if (typeof chunk === 'function') [chunk, encodingOrCb] = [undefined, chunk];
    const done = (typeof encodingOrCb === 'function' ? encodingOrCb : cb) as (() => void) | undefined;
    if (this.writableEnded || this.closed) {
      if (done !== undefined) process.nextTick(done);
      return this;
    }
    if (chunk !== undefined && chunk !== null) this.write(chunk, encodingOrCb);
    this.writableEnded = true;
    if (done !== undefined) {
      if (stream.writableEnded) this.once('finish', done);
      else stream.once('finish', done);
    }
    if (!stream.headersSent) this.writeHead(this.statusCode);
    if (this.closed || stream.destroyed) onStreamClose.call(stream);
    else if (!stream.writableEnded) stream.end();
    return this;
  }

  destroy(err?: Error): this {
    if (!this.stream.destroyed) this.stream.destroy(err);
    return this;
  }

  setTimeout(msecs: number, callback?: () => void): this {
    if (!this.closed) this.stream.setTimeout(msecs, callback);
    return this;
  }

  cork(): void {
    this.stream.cork();
  }
  uncork(): void {
    this.stream.uncork();
  }

  /** The 'close' of the stream: the answer is over, sent or cut. */
  closeOnce(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('finish');
    this.emit('close');
  }

  /** Node asks for the trailers it was told to wait for: the gRPC status, or none. */
  sendTrailers(): void {
    this.stream.sendTrailers(this.trailers ?? {});
  }

  /** Where a refused head is logged; the listener's class says (server/public-listener.ts). */
  protected headLogger(): Logger | undefined {
    return undefined;
  }

  /**
   * Node refused the head: answered 502 in the gateway's shape instead, or the stream reset when
   * a head already went out (or the 502's own head is refused). The 502 is written onto the
   * stream itself, past any wrapper of this answer (compression would encode it) and past the
   * route's onError plugins (the gateway answers a head it cannot send). The writer that wrote
   * the head goes on as if it went out: its body writes are dropped (a write after the end would
   * reset the stream before the 502 reaches the client), and so is its `destroy()` of an answer
   * it thinks is cut short.
   */
  private headRefused(err: unknown): void {
    const { stream } = this;
    const cause = err as { code?: unknown; message?: unknown } | null;
    this.headLogger()?.error(
      { reqId: this.requestId, err: { code: cause?.code, message: cause?.message } },
      'response head refused by HTTP/2',
    );
    // A second refusal (the 502's own head) must not loop: the first one replaced `write`.
    if (stream.headersSent || this.write === ignoredWrite) return resetForRefusedHead(stream);
    this.fields = undefined;
    this.write = ignoredWrite;
    this.destroy = ignoredDestroy as () => this;
    const res = this as unknown as ServerResponse;
    if (answersAsGrpc(res)) return sendGrpcError(res, REFUSED_HEAD);
    const { status, headers, body } = errorResponse(REFUSED_HEAD, { 'x-request-id': this.requestId ?? '' });
    this.writableEnded = true;
    this.statusCode = status;
    try {
      this.respond({ ...headers, ':status': status }, false);
      stream.end(body);
    } catch {
      resetForRefusedHead(stream);
    }
  }
}

const REFUSED_HEAD = 'GW_UPSTREAM_BAD_RESPONSE';

/**
 * Destroying the stream with an error resets it with INTERNAL_ERROR on Node 20, 22 and 24;
 * `stream.close(code)` after a DATA frame ends it cleanly on Node 24, and the client would take
 * the cut answer for a whole one.
 */
function resetForRefusedHead(stream: ServerHttp2Stream): void {
  stream.destroy(new Error('response head refused by HTTP/2'));
}

// The stream's listeners: one function each for every response, no closure made per stream.
function onStreamClose(this: ServerHttp2Stream): void {
  (this as AnsweredStream)[RESPONSE]?.closeOnce();
}
function onStreamDrain(this: ServerHttp2Stream): void {
  (this as AnsweredStream)[RESPONSE]?.emit('drain');
}
function onWantTrailers(this: ServerHttp2Stream): void {
  (this as AnsweredStream)[RESPONSE]?.sendTrailers();
}

function ignoredWrite(): boolean {
  return true;
}

function ignoredDestroy(this: GatewayH2Response): GatewayH2Response {
  return this;
}

/** A GatewayH2Response class whose refused heads are logged to `logger`. */
export function loggedH2Response(logger: Logger): typeof GatewayH2Response {
  return class LoggedH2Response extends GatewayH2Response {
    protected override headLogger(): Logger {
      return logger;
    }
  };
}
