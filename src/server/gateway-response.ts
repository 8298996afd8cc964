/**
 * The server's response class: every response carries `X-Request-ID` (docs/design-decisions.md) without a
 * `setHeader` per request. `res.setHeader()` before `writeHead(status, headers)` sends Node down
 * its slow path (each header of the object set and validated one by one); the hot writers
 * (proxy, mapping, SSE, cache hits) put the id in the headers they build anyway, and only writers
 * that do not (errors, health, Node's implicit head on `end()`) get it set here. The headers
 * object a caller passes is never modified: some are shared constants.
 */
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import { Http2ServerResponse, constants, type ServerStreamResponseOptions } from 'node:http2';
import type { Logger } from '../observability/logger.js';
import { errorResponse } from '../response/send-error.js';
import { answersAsGrpc, isGrpcContentType, sendGrpcError } from '../response/grpc-status.js';
import { isGrpcStream } from './http2-request.js';
import type { ErrorHook, ErrorHookSlot } from '../response/error-hooks.js';
import type { CompressionSlot } from '../response/compression/answer-slot.js';

type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[];

export class GatewayResponse<Request extends IncomingMessage = IncomingMessage>
  extends ServerResponse<Request>
  implements ErrorHookSlot, CompressionSlot
{
  /** Set by the request handler before anything can write the head. */
  requestId: string | undefined = undefined;
  /** A route's onError plugins (response/error-hooks.ts): a field, so that setting it costs no WeakMap entry. */
  errorHook: ErrorHook | undefined = undefined;
  /** The answer's compression on a route that compresses (response/compression/compress-response.ts): a field, like errorHook. */
  compressedAnswer: object | undefined = undefined;

  override writeHead(statusCode: number, reasonOrHeaders?: string | Headers, maybeHeaders?: Headers): this {
    const id = this.requestId;
    if (id !== undefined && !namesRequestId(typeof reasonOrHeaders === 'string' ? maybeHeaders : reasonOrHeaders))
      this.setHeader('x-request-id', id);
    return super.writeHead(statusCode, reasonOrHeaders as string, maybeHeaders);
  }
}

/**
 * The same for an HTTP/2 stream, which also drops the header fields HTTP/2 forbids (RFC 9113
 * 8.2.2): the gateway's HTTP/1.1 writers may add `connection: close` (a refusal, a drain) or
 * `upgrade` (426), which would make Node refuse the whole head. A drain closes HTTP/2
 * connections with GOAWAY instead (server/public-listener.ts).
 *
 * It is also the one place where a head Node's HTTP/2 refuses (a backend field HTTP/1.1 allows,
 * such as `http2-settings`, or a single-value field on two lines) is caught, whichever writer
 * wrote it (proxy, mapping, cache hit, plugin): the compatibility response keeps the refused
 * fields, so every later head would throw too, and the stream would hang unanswered.
 */
export class GatewayH2Response extends Http2ServerResponse implements ErrorHookSlot, CompressionSlot {
  requestId: string | undefined = undefined;
  errorHook: ErrorHook | undefined = undefined;
  /** The answer's compression on a route that compresses (response/compression/compress-response.ts): a field, like errorHook. */
  compressedAnswer: object | undefined = undefined;
  /** True once a field was set with `setHeader`/`appendHeader`: the head then starts from them. */
  private ownFields = false;

  override setHeader(name: string, value: number | string | readonly string[]): void {
    if (CONNECTION_SPECIFIC.has(name.toLowerCase())) return;
    this.ownFields = true;
    super.setHeader(name, value);
  }

  override appendHeader(name: string, value: string | string[]): void {
    this.ownFields = true;
    super.appendHeader(name, value);
  }

  /**
   * Sends the head with `stream.respond` itself rather than through the compatibility API, which
   * copies and validates every field into its own object and then always asks for trailers
   * (`waitForTrailers`): Node then sends an empty DATA frame after every body to end the stream.
   * Trailers are asked for only on a gRPC call or a gRPC answer, the only ones the gateway adds
   * trailers to (endpoints/grpc.ts, response/grpc-status.ts). `respond` copies the head and
   * checks its fields (names, connection-specific fields, single-value fields), so a writer's
   * shared headers object is never modified. The compatibility response's own `write`, `end`
   * and `flushHeaders` come here for an implicit head.
   */
  override writeHead(statusCode: number, reasonOrHeaders?: string | Headers, maybeHeaders?: Headers): this {
    const { stream } = this;
    if (stream.destroyed || stream.closed) return this;
    // HTTP/2 has no reason phrase: it is left out.
    const headers = typeof reasonOrHeaders === 'string' ? maybeHeaders : reasonOrHeaders;
    try {
      if (stream.headersSent) throw Object.assign(new Error('Response has already been initiated.'), HEADERS_SENT);
      const head = this.head(statusCode, headers);
      this.statusCode = statusCode;
      const options: ServerStreamResponseOptions & { sendDate: boolean } = {
        endStream: this.writableEnded,
        waitForTrailers: isGrpcStream(stream) || isGrpcContentType(firstString(head['content-type'])),
        // Read by `respond` as the compatibility API passes it (not in the typings).
        sendDate: this.sendDate,
      };
      stream.respond(head, options);
      return this;
    } catch (err) {
      this.headRefused(err);
      return this;
    }
  }

  /** The fields set before, under the writer's `headers` (theirs win, as in `writeHead`), and the id. */
  private head(statusCode: number, headers: Headers | undefined): OutgoingHttpHeaders {
    const head: OutgoingHttpHeaders = this.ownFields ? this.getHeaders() : {};
    if (headers !== undefined) {
      if (!Array.isArray(headers)) {
        for (const name in headers) {
          const value = headers[name];
          const key = name.toLowerCase();
          if (value !== undefined && value !== null && !CONNECTION_SPECIFIC.has(key)) head[key] = value;
        }
      } else appendFields(head, headers);
    }
    const id = this.requestId;
    if (id !== undefined && head['x-request-id'] === undefined) head['x-request-id'] = id;
    head[':status'] = statusCode;
    return head;
  }

  /** Where a refused head is logged; the listener's class says (server/public-listener.ts). */
  protected headLogger(): Logger | undefined {
    return undefined;
  }

  /**
   * Node refused the head: answered 502 in the gateway's shape instead, or the stream reset when
   * a head already went out (or the 502's own head is refused). The 502 is written with the
   * compatibility response's own methods, past any wrapper of this answer (compression would
   * encode it) and past the route's onError plugins (the gateway answers a head it cannot send).
   * The writer that wrote the head goes on as if it went out: its body writes are dropped (a write
   * after the end would reset the stream before the 502 reaches the client), and so is its
   * `destroy()` of an answer it thinks is cut short.
   */
  private headRefused(err: unknown): void {
    const { stream } = this;
    const cause = err as { code?: unknown; message?: unknown } | null;
    this.headLogger()?.error(
      { reqId: this.requestId, err: { code: cause?.code, message: cause?.message } },
      'response head refused by HTTP/2',
    );
    // A second refusal (the 502's own head) must not loop: the first one replaced `write`.
    if (stream.headersSent || this.write === ignoredWrite) {
      stream.close(constants.NGHTTP2_INTERNAL_ERROR);
      return;
    }
    for (const name of this.getHeaderNames()) this.removeHeader(name);
    // Set first: neither Node's `end()` without a chunk nor the 502 below goes through them.
    this.write = ignoredWrite;
    this.destroy = ignoredDestroy as () => this;
    const res = this as unknown as ServerResponse;
    if (answersAsGrpc(res)) return sendGrpcError(res, REFUSED_HEAD);
    const { status, headers, body } = errorResponse(REFUSED_HEAD, { 'x-request-id': this.requestId ?? '' });
    const own = Http2ServerResponse.prototype as OwnMethods;
    own.writeHead.call(this, status, headers);
    own.write.call(this, body);
    own.end.call(this);
  }
}

const REFUSED_HEAD = 'GW_UPSTREAM_BAD_RESPONSE';

/** The compatibility response's methods as `headRefused` calls them. */
interface OwnMethods {
  writeHead(this: Http2ServerResponse, status: number, headers: OutgoingHttpHeaders): unknown;
  write(this: Http2ServerResponse, chunk: Buffer): boolean;
  end(this: Http2ServerResponse): unknown;
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

/**
 * Whether a writer's headers carry the request id already: an object, or a flat array of names
 * and values (the cache's hits write one). An array of pairs is not searched: the id is then set.
 */
function namesRequestId(headers: Headers | undefined): boolean {
  if (headers === undefined) return false;
  if (!Array.isArray(headers)) return headers['x-request-id'] !== undefined;
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === 'x-request-id') return true;
  return false;
}

const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/**
 * A writer's header array into `head`: pairs (`[[name, value]]`) or flat (`[name, value, ...]`).
 * Its names replace the fields set before, and a name given twice keeps every value, as Node's
 * `writeHead` does with an array.
 */
function appendFields(head: OutgoingHttpHeaders, headers: OutgoingHttpHeader[]): void {
  const pairs = headers.length > 0 && Array.isArray(headers[0]);
  const step = pairs ? 1 : 2;
  const fresh = new Set<string>();
  for (let i = 0; i < headers.length; i += step) {
    const name = String(pairs ? (headers[i] as unknown as OutgoingHttpHeader[])[0] : headers[i]).toLowerCase();
    const value = (pairs ? (headers[i] as unknown as OutgoingHttpHeader[])[1] : headers[i + 1]) as OutgoingHttpHeader;
    if (value === undefined || value === null || CONNECTION_SPECIFIC.has(name)) continue;
    const before = fresh.has(name) ? head[name] : undefined;
    fresh.add(name);
    if (before === undefined) head[name] = value;
    else head[name] = ([] as string[]).concat(before as string, value as string);
  }
}

/** The first value of a field that may be given as several. */
function firstString(value: OutgoingHttpHeader | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? (value[0] as string | undefined) : String(value);
}

/** What Node's own `writeHead` throws for a second head. */
const HEADERS_SENT = { code: 'ERR_HTTP2_HEADERS_SENT' };

/** Marks `res` with the request id (falls back to a header for another response class). */
export function stampRequestId(res: ServerResponse, requestId: string): void {
  if (res instanceof GatewayResponse) res.requestId = requestId;
  else if ((res as unknown) instanceof GatewayH2Response) (res as unknown as GatewayH2Response).requestId = requestId;
  else res.setHeader('x-request-id', requestId);
}
