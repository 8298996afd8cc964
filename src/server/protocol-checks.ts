/**
 * The protocol checks every request passes before anything reads its head for routing or auth,
 * whichever way it came (HTTP/1.1, HTTP/2, a WebSocket handshake): framing, version, Host
 * (RFC 9112), and the CONNECT refusal. Node has parsed what followed a refused request by the
 * refused request's framing, which the refusal says not to trust: such a connection serves no
 * further request.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorCode } from '../response/errors.js';
import { errorResponse } from '../response/send-error.js';
import { requestIdFor } from '../observability/request-id.js';
import { sendOnSocket } from './socket-response.js';
import { GatewayH2Request } from './http2-request.js';

/** Marks a connection whose framing the gateway refused: it serves no further request. */
const FRAMING_REFUSED = Symbol('portico.framingRefused');
type RefusedSocket = IncomingMessage['socket'] & { [FRAMING_REFUSED]?: true };

/** True when an earlier request on this connection was refused for its framing. */
export function onRefusedConnection(req: IncomingMessage): boolean {
  return (req.socket as RefusedSocket)[FRAMING_REFUSED] === true;
}

/** Marks the connection of `req`, refused for its framing, so that it serves nothing more. */
export function refuseConnection(req: IncomingMessage): void {
  (req.socket as RefusedSocket)[FRAMING_REFUSED] = true;
}

/**
 * A cheap test that is false for nearly every request: only when it is true can
 * `protocolRefusal` find something to refuse.
 */
export function mayBeRefused(req: IncomingMessage): boolean {
  return (
    req.httpVersionMajor !== 1 ||
    req.headers['transfer-encoding'] !== undefined ||
    req.rawHeaders.length >= MAX_HEADER_ENTRIES ||
    !hasOneValidHost(req)
  );
}

/**
 * Node's parser hands over the fields of a head in batches and stops adding batches to
 * `rawHeaders` past 2,000 entries, and `req.headers` holds only the first 2,000 entries
 * (1,000 fields), yet the body is framed by every field: a request this long may have a
 * Content-Length or Transfer-Encoding the gateway cannot see, so it is refused.
 */
const MAX_HEADER_ENTRIES = 2_000;

/** RFC 3986 `host [ ":" port ]`: an IP literal, or a registered name or IPv4 address. */
const VALID_HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::[0-9]*)?$/;

/**
 * True when the request has exactly one Host field with a valid value (RFC 9112 3.2: anything
 * else is a 400), or none on HTTP/1.0. X-Forwarded-Host carries it to the backend, where a
 * forged path or userinfo in it could end up in the URLs the backend builds.
 */
function hasOneValidHost(req: IncomingMessage): boolean {
  const host = req.headers.host;
  if (host === undefined) return req.httpVersionMinor === 0;
  if (!VALID_HOST.test(host)) return false;
  // Node keeps the first of several Host fields: only the raw list shows a second.
  const raw = req.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host' && ++seen > 1) return false;
  }
  return true;
}

/**
 * The Host check alone, for every listener that answers requests without the framing checks of
 * `protocolRefusal` (the admin listener, the redirect listener, CONNECT): `GW_BAD_HOST` for a
 * Host missing, repeated or malformed, or an HTTP/2 `host` field naming another host than
 * `:authority`; undefined when it is fine.
 */
export function hostRefusal(req: IncomingMessage): 'GW_BAD_HOST' | undefined {
  if (req instanceof GatewayH2Request) {
    // Several host fields were counted when the request was made (server/http2-request.ts).
    const host = req.headers.host;
    return host !== undefined && !req.hostConflict && VALID_HOST.test(host) ? undefined : 'GW_BAD_HOST';
  }
  return hasOneValidHost(req) ? undefined : 'GW_BAD_HOST';
}

/**
 * What a proxy must not forward (RFC 9112 6.1, 6.3; nginx refuses the same): a version other
 * than HTTP/1.x, Transfer-Encoding on HTTP/1.0 (its framing is faulty by definition), a transfer
 * coding other than exactly `chunked` (the body would go on still coded, unknown to the
 * backend), more header fields than Node keeps, a Host missing, repeated or malformed.
 * The connection closes after the answer: the body that follows is not read.
 */
export function protocolRefusal(req: IncomingMessage): ErrorCode | undefined {
  // HTTP/2 frames the body itself; its host (`:authority`, set as Host by server/http2-request.ts)
  // is required and checked as HTTP/1.1's is.
  if (req instanceof GatewayH2Request) return hostRefusal(req);
  if (req.httpVersionMajor !== 1) return 'GW_HTTP_VERSION_UNSUPPORTED';
  if (req.rawHeaders.length >= MAX_HEADER_ENTRIES) return 'GW_HEADERS_TOO_LARGE';
  const te = req.headers['transfer-encoding'];
  if (te !== undefined) {
    if (req.httpVersionMinor === 0) return 'GW_BAD_REQUEST';
    if (te.trim().toLowerCase() !== 'chunked') return 'GW_TRANSFER_CODING_UNSUPPORTED';
  }
  if (!hasOneValidHost(req)) return 'GW_BAD_HOST';
  return undefined;
}

/** Methods some route can have: the `Allow` of the refusal of CONNECT. */
export const ROUTE_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

/**
 * The server's `connect` listener. The gateway is no forward proxy and opens no tunnels: a
 * CONNECT request gets a JSON 405 (400 for a bad Host) and the connection closes (without a listener Node would drop
 * the connection without a word).
 */
export function sendConnectError(req: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  const requestId = requestIdFor(req.headers['x-request-id']);
  // The Host check comes first here as on every other path: a bad one is a 400 whatever the method.
  const r =
    hostRefusal(req) === undefined
      ? errorResponse('GW_METHOD_UNSUPPORTED', { 'x-request-id': requestId, allow: ROUTE_METHODS })
      : errorResponse('GW_BAD_HOST', { 'x-request-id': requestId });
  sendOnSocket(socket, r.status, r.headers, r.body);
}
