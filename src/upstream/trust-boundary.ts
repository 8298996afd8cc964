/**
 * The trust boundary: which parts of a client's request may reach a backend, for every route kind
 * (plain, mapped, aggregated, SSE, WebSocket; HTTP/1.1 and HTTP/2). A backend may believe what
 * the gateway checked or set, and nothing a client could have written in its place; the table in
 * docs/security.md "What a backend may believe" is this module, header by header.
 *
 * Header names are compared folded: lower case, with `_` read as `-`. CGI, WSGI, Rack and PHP-FPM
 * servers turn `X_Role` and `X-Role` into the same `HTTP_X_ROLE`, so a rule that drops one
 * spelling must drop both. Client header names with `_` are dropped altogether unless the route
 * opts in (`headers.allowUnderscores`), as nginx does by default (`underscores_in_headers off`).
 */
import type { IncomingMessage } from 'node:http';
import { HOP_BY_HOP } from '../config/syntax/headers.js';
import type { RouteKind } from '../config/types.js';
import { TRACE_HEADERS } from '../observability/trace-context.js';

/** Headers the gateway sets itself on the way to a backend. */
const GATEWAY_OWNED = ['host', 'x-request-id', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'expect'];

/**
 * Method-override headers: a backend that honours them would run another method than the one
 * the route was matched, authorised and rate-limited for (a POST route turned into a DELETE).
 * Routes are per method, so the method the client wants is the request line's: never forwarded.
 */
const METHOD_OVERRIDE = ['x-http-method-override', 'x-http-method', 'x-method-override'];

/**
 * Headers in which a client states where the request came from, or what its URL, port or scheme
 * was before a proxy: the ones nginx, Envoy, CDNs and web frameworks set or read. Only a trusted
 * proxy (`config.trustProxy`) may send them: from anyone else they would let a client choose the
 * address a backend logs, rate-limits or allow-lists, or the path a framework routes
 * (`X-Original-URL`). `X-Forwarded-For`, `-Proto` and `-Host` are the gateway's own and handled
 * apart (a trusted proxy's `X-Forwarded-For` is extended, anyone else's replaced).
 */
export const PEER_ASSERTED: ReadonlySet<string> = new Set([
  'forwarded',
  'x-real-ip',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-forwarded-scheme',
  'x-forwarded-ssl',
  'x-forwarded-server',
  'x-forwarded-uri',
  'x-original-url',
  'x-rewrite-url',
  'x-original-host',
  'true-client-ip',
  'x-client-ip',
  'x-cluster-client-ip',
  'cf-connecting-ip',
  'fastly-client-ip',
  'x-originating-ip',
  'front-end-https',
]);

/**
 * What a call whose answer the gateway reads whole does not forward: `Accept-Encoding` (it asks
 * for `identity` instead) and `Range`/`If-Range`, since a part of the body could neither be
 * parsed nor filtered, and a 206 relayed as it is would skip the route's field rules.
 */
const WHOLE_BODY_DROPS: readonly string[] = ['accept-encoding', 'range', 'if-range'];

/**
 * What a cached route does not forward: the whole-body drops (the cache stores whole answers in
 * the gateway's own coding) and the client's validators, which the cache answers itself from the
 * whole answer it stores (a 304 to the client's validators could not be stored). The cache sends
 * its own, those of its stored answer, to revalidate it (layers/cache.ts).
 */
const CACHED_DROPS: readonly string[] = [...WHOLE_BODY_DROPS, 'if-none-match', 'if-modified-since'];

/** An aggregated route's calls send no body, so none is announced. */
const NO_BODY_DROPS = ['content-length', 'content-type'];

/**
 * Names no claim header (`X-<claim>`, auth/claim-headers.ts) may take, folded: the ones the
 * gateway sets, the ones only a trusted proxy may send, method overrides and trace context. A
 * claim is a statement of the token's issuer about its subject, never about the connection.
 */
const CLAIM_RESERVED: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP,
  ...GATEWAY_OWNED,
  ...METHOD_OVERRIDE,
  ...PEER_ASSERTED,
  ...TRACE_HEADERS,
]);

/** A lower-case header name as CGI-style servers read it: `_` and `-` are the same character. */
export function foldHeaderName(lower: string): string {
  return lower.includes('_') ? lower.replaceAll('_', '-') : lower;
}

/**
 * The per-configuration set of client request headers never forwarded (folded names), and what
 * else decides what passes: whether the socket's peer is a trusted proxy (its `X-Forwarded-For`,
 * `Forwarded` and `X-Real-IP` then pass), the client-certificate subject header, and whether the
 * route takes header names with `_`.
 */
export interface RequestDropSet extends ReadonlySet<string> {
  readonly trustsPeer?: (address: string) => boolean;
  /**
   * The header that carries the subject of a verified client certificate to backends
   * (`config.tls.clientSubjectHeader`); it is in the set too, so a client cannot send its own.
   */
  readonly clientSubjectHeader?: string | undefined;
  /** Client header names with `_` pass (`headers.allowUnderscores`), compared folded. */
  readonly underscores?: boolean;
}

/**
 * Builds the per-configuration set of client request headers that are never forwarded. With
 * trace propagation on (`telemetry.propagation`), the client's `traceparent`/`tracestate` are in
 * it and the gateway adds its child ones instead; off, they pass unchanged. `trustsPeer`
 * defaults to trusting no one.
 */
export function requestDropSet(
  stripHeaders: readonly string[],
  propagateTrace = true,
  trustsPeer: (address: string) => boolean = () => false,
  clientSubjectHeader?: string,
): RequestDropSet {
  const set = new Set(
    [
      ...HOP_BY_HOP,
      ...GATEWAY_OWNED,
      ...METHOD_OVERRIDE,
      ...(propagateTrace ? TRACE_HEADERS : []),
      ...stripHeaders,
      ...(clientSubjectHeader === undefined ? [] : [clientSubjectHeader]),
    ].map((h) => foldHeaderName(h.toLowerCase())),
  );
  return Object.assign(set, { trustsPeer, clientSubjectHeader: clientSubjectHeader?.toLowerCase() });
}

/**
 * The drop set of one route, by its kind: a route whose answer is read whole (mapped, filtered,
 * aggregated) or flushed event by event (SSE) adds `WHOLE_BODY_DROPS`; an aggregated route sends
 * no body; `headers.allowUnderscores` lets names with `_` through. Made once, at config load. A
 * gRPC route drops `TE` like any route and sends its own `te: trailers` (endpoints/grpc.ts).
 */
export function routeDropSet(
  drop: RequestDropSet,
  route: { readonly kind: RouteKind; readonly allowUnderscores: boolean; readonly caches?: boolean },
): RequestDropSet {
  const group = route.kind === 'aggregate' ? 2 : route.kind === 'mapping' || route.kind === 'sse' ? 1 : 0;
  const key = group * 4 + (route.allowUnderscores ? 2 : 0) + (route.caches === true ? 1 : 0);
  // Read-only and the same for every route of one variant: one set per variant (at most 12), not
  // a copy of about 30 names per route for a reload of many routes to build and then collect.
  let made = routeSets.get(drop);
  if (made === undefined) routeSets.set(drop, (made = []));
  return (made[key] ??= makeRouteDropSet(drop, group, route.allowUnderscores, route.caches === true));
}

/** The route sets made from each configuration's set, by variant; they go with it. */
const routeSets = new WeakMap<RequestDropSet, RequestDropSet[]>();

function makeRouteDropSet(drop: RequestDropSet, group: number, underscores: boolean, caches: boolean): RequestDropSet {
  const byKind = group === 2 ? [...WHOLE_BODY_DROPS, ...NO_BODY_DROPS] : group === 1 ? WHOLE_BODY_DROPS : [];
  const extra = caches ? [...byKind, ...CACHED_DROPS] : byKind;
  return Object.assign(new Set([...drop, ...extra]), {
    trustsPeer: drop.trustsPeer,
    clientSubjectHeader: drop.clientSubjectHeader,
    underscores,
  });
}

/**
 * Whether a claim header name (lower case) is one no claim may produce: the names in
 * `CLAIM_RESERVED` and the configuration's client-certificate subject header, compared folded.
 */
export function isReservedForClaims(lower: string, clientSubjectHeader?: string): boolean {
  const name = foldHeaderName(lower);
  return (
    CLAIM_RESERVED.has(name) ||
    (clientSubjectHeader !== undefined && name === foldHeaderName(clientSubjectHeader.toLowerCase()))
  );
}

/**
 * Removes every `Authorization` field from the raw list the backend's headers are built from: the
 * token the gateway verified came from a cookie or the query (`auth.tokenFrom`), and a backend
 * that reads `Authorization` itself must not find another credential there.
 */
export function withoutClientAuthorization(req: IncomingMessage): void {
  const raw = req.rawHeaders;
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2)
    if (raw[i]!.toLowerCase() !== 'authorization') kept.push(raw[i]!, raw[i + 1]!);
  // Defined rather than assigned: a request class may have `rawHeaders` as a getter only.
  Object.defineProperty(req, 'rawHeaders', { value: kept, configurable: true, writable: true });
}

/**
 * Query parameters that override the method (`_method`, read by Symfony, Express's
 * method-override and others), in any case and escaping: dropped like the headers above.
 */
const METHOD_PARAM = /(?:^|&)(?:_|%5f)method(?:[=&[]|%5b|$)/i;

/**
 * Whether one `name=value` part of the client's query may reach the backend: not a method
 * override, and not a parameter the route's path template sets (`key`, decoded), in any of the
 * spellings frameworks read as the same parameter (`id[]`, `id[0]`, `id[x]`: PHP, qs, Rack).
 */
export function queryPartPasses(key: string, own: ReadonlySet<string>): boolean {
  const bracket = key.indexOf('[');
  const base = bracket > 0 ? key.slice(0, bracket) : key;
  if (own.has(base)) return false;
  return base.toLowerCase() !== '_method';
}

/** A quick test that a query may hold a method override, so that most queries pass untouched. */
export function mayOverrideMethod(rawQuery: string): boolean {
  return METHOD_PARAM.test(rawQuery);
}
