/**
 * The endpoint of standard routes: the request is streamed to the backend and the answer streamed
 * back, never buffered. The call is one dispatch handler per request (upstream/call/backend-call.ts)
 * that writes the backend's head and body chunks straight into the client response.
 */
import type { CompiledRoute, Exchange, Step } from '../pipeline/types.js';
import { BackendCall } from '../upstream/call/backend-call.js';
import { createRouteCall, type BackendCallOptions, type RouteCall } from '../upstream/call/route-call.js';

export type ForwardOptions = Omit<BackendCallOptions, 'streaming'>;

/** One proxied call: the backend's answer as it comes. */
export class ForwardCall extends BackendCall {
  protected onResponse(ex: Exchange, statusCode: number, headers: Record<string, string | string[]>): boolean {
    // A 204 never has a body, so no length either (RFC 9110 8.6).
    if (statusCode === 204) delete headers['content-length'];
    ex.res.writeHead(statusCode, headers);
    // 204 and 304 have no body whatever their Content-Length says (a 304 may carry the length of
    // the 200 it stands for): the answer is complete now. undici reports such a 304 as a length
    // mismatch once it sees no body; by then the answer is out and the error changes nothing.
    if (statusCode === 204 || statusCode === 304) {
      ex.res.end();
      this.settle();
    }
    return true;
  }
}

export function forwardEndpoint(route: CompiledRoute, options: ForwardOptions): Step {
  const call: RouteCall = createRouteCall(route, options);
  return (ex) => new Promise<void>((resolve) => new ForwardCall(ex, call, resolve).start());
}
