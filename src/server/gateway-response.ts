/**
 * The server's response class: every response carries `X-Request-ID` (docs/design-decisions.md) without a
 * `setHeader` per request. `res.setHeader()` before `writeHead(status, headers)` sends Node down
 * its slow path (each header of the object set and validated one by one); the hot writers
 * (proxy, mapping, SSE, cache hits) put the id in the headers they build anyway, and only writers
 * that do not (errors, health, Node's implicit head on `end()`) get it set here. The headers
 * object a caller passes is never modified: some are shared constants.
 */
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import { GatewayH2Response } from './h2-response.js';
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
 * Whether a writer's headers carry the request id already: an object, or a flat array of names
 * and values (the cache's hits write one). An array of pairs is not searched: the id is then set.
 */
function namesRequestId(headers: Headers | undefined): boolean {
  if (headers === undefined) return false;
  if (!Array.isArray(headers)) return headers['x-request-id'] !== undefined;
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === 'x-request-id') return true;
  return false;
}

/** Marks `res` with the request id (falls back to a header for another response class). */
export function stampRequestId(res: ServerResponse, requestId: string): void {
  if (res instanceof GatewayResponse) res.requestId = requestId;
  else if ((res as unknown) instanceof GatewayH2Response) (res as unknown as GatewayH2Response).requestId = requestId;
  else res.setHeader('x-request-id', requestId);
}
