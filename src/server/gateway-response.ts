/**
 * The server's response class: every response carries `X-Request-ID` (docs/design-decisions.md) without a
 * `setHeader` per request. `res.setHeader()` before `writeHead(status, headers)` sends Node down
 * its slow path (each header of the object set and validated one by one); the hot writers
 * (proxy, mapping, SSE) put the id in the headers object they build anyway, and only writers
 * that do not (errors, health, Node's implicit head on `end()`) get it set here. The headers
 * object a caller passes is never modified: some are shared constants.
 */
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import { Http2ServerResponse } from 'node:http2';
import type { ErrorHook, ErrorHookSlot } from '../response/error-hooks.js';

type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[];

export class GatewayResponse<Request extends IncomingMessage = IncomingMessage>
  extends ServerResponse<Request>
  implements ErrorHookSlot
{
  /** Set by the request handler before anything can write the head. */
  requestId: string | undefined = undefined;
  /** A route's onError plugins (response/error-hooks.ts): a field, so that setting it costs no WeakMap entry. */
  errorHook: ErrorHook | undefined = undefined;

  override writeHead(statusCode: number, reasonOrHeaders?: string | Headers, maybeHeaders?: Headers): this {
    const id = this.requestId;
    if (id !== undefined) {
      const headers = typeof reasonOrHeaders === 'string' ? maybeHeaders : reasonOrHeaders;
      if (headers === undefined || Array.isArray(headers) || headers['x-request-id'] === undefined)
        this.setHeader('x-request-id', id);
    }
    return super.writeHead(statusCode, reasonOrHeaders as string, maybeHeaders);
  }
}

/**
 * The same for an HTTP/2 stream, which also drops the header fields HTTP/2 forbids (RFC 9113
 * 8.2.2): the gateway's HTTP/1.1 writers may add `connection: close` (a refusal, a drain) or
 * `upgrade` (426), which would make Node refuse the whole head. A drain closes HTTP/2
 * connections with GOAWAY instead (server/public-listener.ts).
 */
export class GatewayH2Response extends Http2ServerResponse implements ErrorHookSlot {
  requestId: string | undefined = undefined;
  errorHook: ErrorHook | undefined = undefined;

  override setHeader(name: string, value: number | string | readonly string[]): void {
    if (!CONNECTION_SPECIFIC.has(name.toLowerCase())) super.setHeader(name, value);
  }

  override writeHead(statusCode: number, reasonOrHeaders?: string | Headers, maybeHeaders?: Headers): this {
    // HTTP/2 has no reason phrase: it is left out.
    let headers = typeof reasonOrHeaders === 'string' ? maybeHeaders : reasonOrHeaders;
    if (headers !== undefined && !Array.isArray(headers)) headers = withoutConnectionSpecific(headers);
    const id = this.requestId;
    if (id !== undefined && (headers === undefined || Array.isArray(headers) || headers['x-request-id'] === undefined))
      super.setHeader('x-request-id', id);
    return super.writeHead(statusCode, headers as OutgoingHttpHeaders);
  }
}

const CONNECTION_SPECIFIC_NAMES = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'];
const CONNECTION_SPECIFIC = new Set(CONNECTION_SPECIFIC_NAMES);

/** `headers` itself when it has none of those fields (every proxied answer), else a copy without them. */
function withoutConnectionSpecific(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  if (!CONNECTION_SPECIFIC_NAMES.some((name) => headers[name] !== undefined)) return headers;
  const copy = { ...headers };
  for (const name of CONNECTION_SPECIFIC_NAMES) delete copy[name];
  return copy;
}

/** Marks `res` with the request id (falls back to a header for another response class). */
export function stampRequestId(res: ServerResponse, requestId: string): void {
  if (res instanceof GatewayResponse) res.requestId = requestId;
  else if ((res as unknown) instanceof GatewayH2Response) (res as unknown as GatewayH2Response).requestId = requestId;
  else res.setHeader('x-request-id', requestId);
}
