/**
 * Header rules between client and backend (docs/design-decisions.md "HTTP behaviour"): hop-by-hop headers
 * never cross the gateway, `Host` is the backend's, `X-Forwarded-*` and `X-Request-ID` are the
 * gateway's, and identity headers a client could forge are dropped before auth adds real ones.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { createRequire } from 'node:module';
import { TRACE_HEADERS, appendTraceHeaders } from '../../observability/trace-context.js';
import { HOP_BY_HOP } from '../../config/syntax/headers.js';

/** Headers the gateway sets itself on the way to a backend. */
const GATEWAY_OWNED = ['host', 'x-request-id', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'expect'];

/**
 * Method-override headers: a backend that honours them would run another method than the one
 * the route was matched, authorised and rate-limited for (a POST route turned into a DELETE).
 * Routes are per method, so the method the client wants is the request line's: never forwarded.
 */
export const METHOD_OVERRIDE = ['x-http-method-override', 'x-http-method', 'x-method-override'];

/**
 * Headers in which a client states where the request came from, or what its URL, port or scheme
 * was before a proxy: the ones nginx, Envoy, CDNs and web frameworks set or read. Only a trusted
 * proxy (`config.trustProxy`) may send them: from anyone else they would let a client choose the
 * address a backend logs, rate-limits or allow-lists, or the path a framework routes
 * (`X-Original-URL`). `X-Forwarded-For`, `-Proto` and `-Host` are the gateway's own and handled
 * apart (a trusted proxy's `X-Forwarded-For` is extended, anyone else's replaced).
 */
const PEER_ASSERTED = new Set([
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
 * The per-configuration set of client request headers never forwarded, and whether the socket's
 * peer is a trusted proxy (its `X-Forwarded-For`, `Forwarded` and `X-Real-IP` then pass).
 */
export interface RequestDropSet extends ReadonlySet<string> {
  readonly trustsPeer?: (address: string) => boolean;
  /**
   * The header that carries the subject of a verified client certificate to backends
   * (`config.tls.clientSubjectHeader`); it is in the set too, so a client cannot send its own.
   */
  readonly clientSubjectHeader?: string | undefined;
}

/**
 * Builds the per-configuration set of client request headers that are never forwarded. With
 * trace propagation on (`telemetry.propagation`), the client's `traceparent`/`tracestate` are in
 * it and `upstreamRequestHeaders` adds the gateway's child ones instead; off, they pass unchanged.
 * `trustsPeer` defaults to trusting no one.
 */
export function requestDropSet(
  stripHeaders: readonly string[],
  propagateTrace = true,
  trustsPeer: (address: string) => boolean = () => false,
  clientSubjectHeader?: string,
): RequestDropSet {
  const set = new Set([
    ...HOP_BY_HOP,
    ...GATEWAY_OWNED,
    ...METHOD_OVERRIDE,
    ...(propagateTrace ? TRACE_HEADERS : []),
    ...stripHeaders.map((h) => h.toLowerCase()),
    ...(clientSubjectHeader === undefined ? [] : [clientSubjectHeader.toLowerCase()]),
  ]);
  return Object.assign(set, { trustsPeer, clientSubjectHeader });
}

/** The same drop set with more names in it; what else it says (trust, client subject) is kept. */
export function alsoDropping(drop: RequestDropSet, names: readonly string[]): RequestDropSet {
  return Object.assign(new Set([...drop, ...names]), {
    trustsPeer: drop.trustsPeer,
    clientSubjectHeader: drop.clientSubjectHeader,
  });
}

/**
 * The subject of the client certificate the TLS handshake verified (`CN=client-1,O=Acme`), or
 * undefined: no TLS, no certificate, one that did not verify, or a subject that cannot be a header.
 */
function verifiedClientSubject(req: IncomingMessage): string | undefined {
  const socket = req.socket as TLSSocket;
  if (socket.encrypted !== true || !socket.authorized) return undefined;
  const subject = socket.getPeerX509Certificate()?.subject.split('\n').join(',');
  return subject === undefined || subject === '' || /[^\x20-\x7e]/.test(subject) ? undefined : subject;
}

export interface ForwardContext {
  readonly req: IncomingMessage;
  readonly requestId: string;
  readonly hostHeader: string;
  readonly claimHeaders: readonly [string, string][] | undefined;
  /** The length of a body the gateway buffered from a chunked upload (it goes out with a length). */
  readonly bodyLength?: number | undefined;
}

/**
 * The flat `[name, value, ...]` header list for the backend request, built from the client's raw
 * headers in one pass (undici takes the flat form without copying it again).
 */
export function upstreamRequestHeaders(ctx: ForwardContext, drop: RequestDropSet): string[] {
  const raw = ctx.req.rawHeaders;
  const out: string[] = ['host', ctx.hostHeader];
  const connectionTokens = connectionListed(ctx.req.headers);
  const claims = ctx.claimHeaders;
  const claimNames = claims === undefined ? undefined : new Set(claims.map(([c]) => c.toLowerCase()));
  const remote = ctx.req.socket.remoteAddress ?? '';
  const trusted = drop.trustsPeer?.(remote) === true;
  let clientXff: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (drop.has(lower)) {
      if (trusted && lower === 'x-forwarded-for')
        clientXff = clientXff === undefined ? raw[i + 1] : `${clientXff}, ${raw[i + 1]}`;
      continue;
    }
    if (!trusted && PEER_ASSERTED.has(lower)) continue;
    if (connectionTokens !== undefined && connectionTokens.has(lower)) continue;
    if (claimNames !== undefined && claimNames.has(lower)) continue;
    out.push(name, raw[i + 1]!);
  }
  if (claims !== undefined) for (const [n, v] of claims) out.push(n, v);
  if (drop.clientSubjectHeader !== undefined) {
    const subject = verifiedClientSubject(ctx.req);
    if (subject !== undefined) out.push(drop.clientSubjectHeader, subject);
  }
  if (ctx.bodyLength !== undefined) out.push('content-length', String(ctx.bodyLength));
  out.push(
    'x-forwarded-for',
    clientXff === undefined ? remote : `${clientXff}, ${remote}`,
    'x-forwarded-proto',
    (ctx.req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
    'x-request-id',
    ctx.requestId,
  );
  const host = ctx.req.headers.host;
  if (host !== undefined) out.push('x-forwarded-host', host);
  // W3C trace context: same trace, a child span id for this call (observability/trace-context.ts).
  if (drop.has('traceparent')) appendTraceHeaders(ctx.req, out);
  return out;
}

/** Backend response headers without hop-by-hop ones and without the backend's request id. */
export function downstreamResponseHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const connectionTokens = connectionListed(headers);
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || RESPONSE_DROP.has(name)) continue;
    if (connectionTokens !== undefined && connectionTokens.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/**
 * The same rules for undici's raw `[name, value, ...]` response list, building the one object
 * Node's `writeHead` takes (the proxy's hot path: this replaces undici's own parse into an object
 * plus the copy above; docs/performance.md has the figures). Repeated names become arrays, as in
 * undici's parse and Node's `IncomingMessage`. Throws UpstreamFramingError for a transfer coding
 * other than `chunked`.
 */
export function downstreamHeadersFromRaw(raw: readonly Buffer[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  let connection: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = headerName(raw[i]!);
    const value = raw[i + 1]!.toString('latin1');
    if (RESPONSE_DROP.has(name)) {
      if (name === 'connection') connection = connection === undefined ? value : `${connection},${value}`;
      else if (name === 'transfer-encoding' && value.trim().toLowerCase() !== 'chunked')
        throw new UpstreamFramingError(value);
      continue;
    }
    const seen = out[name];
    if (seen === undefined) out[name] = value;
    else if (typeof seen === 'string') out[name] = [seen, value];
    else seen.push(value);
  }
  const listed = connection === undefined ? undefined : connectionListed({ connection });
  if (listed !== undefined) for (const name of listed) delete out[name];
  return out;
}

/**
 * A response framed by a transfer coding other than exactly `chunked` (`xchunked`, `gzip, chunked`,
 * a quoted or repeated value): HTTP/1.1 reads such a body until the connection closes, and a
 * coding left on it would reach the client undeclared. Refused as a bad answer (502), as nginx
 * refuses an unknown Transfer-Encoding from upstream.
 */
export class UpstreamFramingError extends Error {
  readonly code = 'GW_UPSTREAM_FRAMING';
  constructor(transferEncoding: string) {
    super(`backend response with Transfer-Encoding ${JSON.stringify(transferEncoding)}`);
    this.name = 'UpstreamFramingError';
  }
}

// `__proto__` as a key would set the object's prototype instead of a header: never forwarded.
const RESPONSE_DROP = new Set([...HOP_BY_HOP, 'x-request-id', '__proto__']);

/**
 * undici's reader of raw header names: known names come back as interned lower-case strings
 * without allocating (a byte trie); lower-casing here instead was slower (docs/performance.md). It is
 * internal to undici 7, so it is looked up defensively, and
 * `headerNamesFromUndici` lets a test notice when an upgrade moves it.
 */
export const headerNamesFromUndici = loadUndiciHeaderName();
const headerName: (raw: Buffer) => string = headerNamesFromUndici ?? ((raw) => raw.toString('latin1').toLowerCase());

function loadUndiciHeaderName(): ((raw: Buffer) => string) | undefined {
  try {
    const util = createRequire(import.meta.url)('undici/lib/core/util.js') as { headerNameToString?: unknown };
    return typeof util.headerNameToString === 'function'
      ? (util.headerNameToString as (raw: Buffer) => string)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Headers named in `Connection` are hop-by-hop too (RFC 9110 7.6.1). */
function connectionListed(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Set<string> | undefined {
  const c = headers.connection;
  if (c === undefined) return undefined;
  const value = Array.isArray(c) ? c.join(',') : c;
  const lower = value.toLowerCase();
  if (lower === 'keep-alive' || lower === 'close') return undefined;
  return new Set(
    lower
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  );
}
