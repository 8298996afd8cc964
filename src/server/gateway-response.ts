/**
 * The server's response class: every response carries `X-Request-ID` (docs/design-decisions.md) without a
 * `setHeader` per request. `res.setHeader()` before `writeHead(status, headers)` sends Node down
 * its slow path (each header of the object set and validated one by one); the hot writers
 * (proxy, mapping, SSE) put the id in the headers object they build anyway, and only writers
 * that do not (errors, health, Node's implicit head on `end()`) get it set here. The headers
 * object a caller passes is never modified: some are shared constants.
 */
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';

type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[];

export class GatewayResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** Set by the request handler before anything can write the head. */
  requestId: string | undefined = undefined;

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

/** Marks `res` with the request id (falls back to a header for a plain ServerResponse). */
export function stampRequestId(res: ServerResponse, requestId: string): void {
  if (res instanceof GatewayResponse) res.requestId = requestId;
  else res.setHeader('x-request-id', requestId);
}
