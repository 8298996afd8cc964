/**
 * What every call of one route shares, fixed at config load (`RouteCall`), and what each of its
 * calls is made of: the backend path and query, the request header list, and the report of the
 * answer's head.
 */
import type { Dispatcher } from 'undici';
import type { CompiledRoute, Exchange } from '../../pipeline/types.js';
import type { EventBus, UpstreamCall } from '../../observability/events.js';
import { bufferedLength } from '../../pipeline/request-body.js';
import type { Upstream } from '../types.js';
import { appendQuery } from '../target-url.js';
import { upstreamRequestHeaders } from '../headers/forward-headers.js';
import type { RequestDropSet } from '../trust-boundary.js';
import { editHeaderList } from '../headers/header-edits.js';
import { callDeadlines, type DeadlineSweep } from './deadlines.js';

export interface BackendCallOptions {
  readonly upstream: Upstream;
  /** Client headers never forwarded: the route's set (upstream/trust-boundary.ts `routeDropSet`). */
  readonly dropHeaders: RequestDropSet;
  /** No response head within this time: 504. A call waiting for a pooled connection counts from its start. */
  readonly headersTimeoutMs: number;
  /** Longest silence between two body chunks; 0 for none (streams). */
  readonly bodyTimeoutMs: number;
  readonly events: EventBus;
  /**
   * Ask for the body as the backend stores it (`Accept-Encoding: identity` instead of the
   * client's): a compressing backend holds stream events back, and enrichment parses the body.
   */
  readonly identityEncoding?: boolean;
  /** Long-lived answers (SSE): the call goes out on the upstream's stream pool. */
  readonly streaming?: boolean;
  /** gRPC calls: out on the upstream's HTTP/2 pool. */
  readonly grpc?: boolean;
  /** What watches the calls' deadlines (default: the process's `callDeadlines`). */
  readonly deadlines?: DeadlineSweep;
}

/** What every call of one route shares, fixed at config load. */
export interface RouteCall {
  readonly route: CompiledRoute;
  readonly upstream: Upstream;
  readonly dropHeaders: RequestDropSet;
  readonly identityEncoding: boolean;
  readonly streaming: boolean;
  /** gRPC calls: out on the upstream's HTTP/2 pool. */
  readonly grpc?: boolean;
  readonly method: Dispatcher.HttpMethod;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  /** The route's `retries`. */
  readonly retries: number;
  readonly deadlines: DeadlineSweep;
  readonly events: EventBus;
}

/** Fixes the calls of one route (once, at config load). */
export function createRouteCall(route: CompiledRoute, options: BackendCallOptions): RouteCall {
  const identityEncoding = options.identityEncoding === true;
  return {
    route,
    upstream: options.upstream,
    dropHeaders: options.dropHeaders,
    identityEncoding,
    streaming: options.streaming === true,
    grpc: options.grpc === true,
    method: route.method as Dispatcher.HttpMethod,
    headersTimeoutMs: options.headersTimeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs,
    retries: route.retries,
    deadlines: options.deadlines ?? callDeadlines,
    events: options.events,
  };
}

/** The backend path and query of a call: the route's path with the parameters, then the client's query. */
export function backendPath(
  route: CompiledRoute,
  ex: Pick<Exchange, 'params' | 'rawQuery'> & Partial<Pick<Exchange, 'upstreamEdits'>>,
): string {
  return ex.upstreamEdits?.path ?? appendQuery(route.buildPath(ex.params), route.path, ex.rawQuery);
}

/**
 * The flat header list of a call: the client's end-to-end headers less the drop set, the claim
 * headers, the forwarding headers and the request id (upstream/headers/forward-headers.ts), then the
 * route's request header rules (upstream/headers/header-edits.ts). `Host` is the target's (the picked
 * pool's origin, for a named upstream). An upgrade
 * passes its own exchange and adds its `Connection: Upgrade`.
 */
export function backendHeaders(
  call: Pick<RouteCall, 'route' | 'dropHeaders' | 'identityEncoding'> & {
    readonly upstream: Pick<Upstream, 'origin'>;
  },
  ex: Pick<Exchange, 'req' | 'requestId' | 'claimHeaders' | 'claims' | 'params' | 'body'> &
    Partial<Pick<Exchange, 'upstreamEdits'>>,
  hostHeader = call.upstream.origin.hostHeader,
): string[] {
  let headers = upstreamRequestHeaders(
    {
      req: ex.req,
      requestId: ex.requestId,
      hostHeader,
      claimHeaders: ex.claimHeaders,
      bodyLength: bufferedLength(ex),
    },
    call.dropHeaders,
  );
  const edit = call.route.editHeaders.request;
  if (edit !== undefined) headers = editHeaderList(edit, headers, ex);
  // A plugin's edits come last: its names were checked against the trust boundary when it set them.
  if (ex.upstreamEdits !== undefined) headers = applyPluginEdits(headers, ex.upstreamEdits.headers);
  if (call.identityEncoding) headers.push('accept-encoding', 'identity');
  return headers;
}

/** The flat list with each plugin edit applied in order: every field of the name removed, the new one added. */
function applyPluginEdits(headers: string[], edits: readonly [string, string | undefined][]): string[] {
  let out = headers;
  for (const [name, value] of edits) {
    const kept: string[] = [];
    for (let i = 0; i < out.length; i += 2) if (out[i]!.toLowerCase() !== name) kept.push(out[i]!, out[i + 1]!);
    if (value !== undefined) kept.push(name, value);
    out = kept;
  }
  return out;
}

/**
 * Reports a call's response head ('upstream:response'): the backend's latency as the gateway saw
 * it, from `started` (a `performance.now()` reading taken when the call went out).
 */
export function reportResponse(
  call: Pick<RouteCall, 'route' | 'upstream' | 'events'>,
  kind: UpstreamCall,
  status: number,
  started: number,
): void {
  call.events.emit('upstream:response', {
    routeId: call.route.id,
    origin: call.upstream.origin.key,
    call: kind,
    status,
    durationMs: performance.now() - started,
  });
}
