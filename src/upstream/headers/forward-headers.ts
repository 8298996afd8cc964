/**
 * The header lists between client and backend (docs/design-decisions.md "HTTP behaviour"), built
 * by the rules of the trust boundary (upstream/trust-boundary.ts): hop-by-hop headers never cross
 * the gateway, `Host` is the backend's, `X-Forwarded-*` and `X-Request-ID` are the gateway's, and
 * identity headers a client could forge are dropped before auth adds real ones.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { createRequire } from 'node:module';
import { appendTraceHeaders } from '../../observability/trace-context.js';
import { HOP_BY_HOP } from '../../config/syntax/headers.js';
import { PEER_ASSERTED, foldHeaderName, type RequestDropSet } from '../trust-boundary.js';

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
  const claimNames = claims === undefined ? undefined : new Set(claims.map(([c]) => foldHeaderName(c.toLowerCase())));
  const remote = ctx.req.socket.remoteAddress ?? '';
  const trusted = drop.trustsPeer?.(remote) === true;
  const underscores = drop.underscores === true;
  let clientXff: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const exact = name.toLowerCase();
    let lower = exact;
    if (lower.includes('_')) {
      // Read as its `-` spelling by CGI-style servers: dropped, or checked in that spelling.
      if (!underscores) continue;
      lower = lower.replaceAll('_', '-');
      if (drop.has(lower)) continue;
    } else if (drop.has(lower)) {
      if (trusted && lower === 'x-forwarded-for')
        clientXff = clientXff === undefined ? raw[i + 1] : `${clientXff}, ${raw[i + 1]}`;
      continue;
    }
    if (!trusted && PEER_ASSERTED.has(lower)) continue;
    if (connectionTokens !== undefined && (connectionTokens.has(exact) || connectionTokens.has(lower))) continue;
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
    out[name] = Array.isArray(value) && ONE_VALUE.has(name) ? oneValue(name, value) : value;
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
    else if (ONE_VALUE.has(name)) {
      if (ONE_VALUE.get(name) === 'join') out[name] = `${seen as string}, ${value}`;
    } else if (typeof seen === 'string') out[name] = [seen, value];
    else seen.push(value);
  }
  const listed = connection === undefined ? undefined : connectionListed({ connection });
  if (listed !== undefined) for (const name of listed) delete out[name];
  return out;
}

/**
 * Response fields that take one value, which a backend may still send on several lines: Node's
 * HTTP/2 refuses such a head whole (ERR_HTTP2_HEADER_SINGLE_VALUE), and a cache reads the first
 * (RFC 9111 5.1 for `Age`, as the public cache test suite checks). Singletons keep their first
 * line; the list fields among them are joined into one line, which means the same (RFC 9110 5.3).
 */
const ONE_VALUE: ReadonlyMap<string, 'first' | 'join'> = new Map([
  ...[
    'age',
    'access-control-allow-credentials',
    'access-control-max-age',
    'content-length',
    'content-location',
    'content-md5',
    'content-range',
    'content-type',
    'date',
    'etag',
    'expires',
    'last-modified',
    'location',
    'retry-after',
    'tk',
    'x-content-type-options',
  ].map((name) => [name, 'first'] as const),
  ['content-encoding', 'join'],
  ['content-language', 'join'],
]);

function oneValue(name: string, values: readonly string[]): string {
  return ONE_VALUE.get(name) === 'join' ? values.join(', ') : values[0]!;
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
