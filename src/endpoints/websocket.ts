/**
 * The WebSocket endpoint of `isWebSocket` routes (docs/design-decisions.md "Streaming"): the end of
 * the route's pipeline (src/pipeline/build.ts), after the guards, auth and the circuit layers,
 * reached only by a handshake (`requireUpgradeLayer`). It answers through the exchange's response,
 * which writes onto the client's socket, until the 101 hands that socket over to the tunnel:
 *
 *   upgrade request to the backend      refused/reset: 502 JSON; no head in time: 504 JSON
 *     backend answers 101               checked: a valid handshake answer (Upgrade: websocket,
 *                                       Sec-WebSocket-Accept of the client's key), else 502 JSON;
 *                                       then the 101 head is relayed, then a byte tunnel (./tunnel.ts)
 *     backend answers anything else     relayed as-is (status, headers, body), then closed
 *
 * The handshake is forwarded, not redone (what nginx does): the client's Sec-WebSocket-Key,
 * -Version, -Protocol and -Extensions go to the backend and its Sec-WebSocket-Accept comes back,
 * so subprotocol and extension negotiation is the backend's and frames cross unchanged.
 * The outcome of opening the connection is recorded on the exchange for the circuit layer: a
 * valid 101 or any answer < 500 succeeds, a 5xx, an invalid 101 or no answer fails, a client that
 * leaves mid-handshake counts nothing. A 101 is only tunneled when it answers this client's key:
 * a backend (or anything listening on its port) that says 101 without speaking WebSocket must not
 * get a raw byte pipe to the client, which would then read whatever that server sends as frames.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import type { CompiledRoute, Exchange, PipelineConfig, Step } from '../pipeline/types.js';
import type { Upstream } from '../upstream/types.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { createRouteCall } from '../upstream/call/route-call.js';
import { upgradeCall } from '../upstream/call/upgrade-call.js';
import { downstreamResponseHeaders } from '../upstream/headers/forward-headers.js';
import type { RequestDropSet } from '../upstream/trust-boundary.js';
import { editHeaderList, editHeaderRecord } from '../upstream/headers/header-edits.js';
import { switchProtocols } from '../server/socket-response.js';
import { CLOSE_GRACE_MS, tunnel, type TunnelEnd, type TunnelOptions } from './tunnel.js';
import { closeAtExpiry } from './tunnel-expiry.js';
import { GoingAway } from './going-away.js';
import type { OpenStreams } from './open-streams.js';

export interface WebSocketOptions {
  readonly upstream: Upstream;
  /** Client headers never forwarded (from the pipeline deps). */
  readonly dropHeaders: RequestDropSet;
  /** No answer to the upgrade request within this time: 504 (`timeouts.backendSec`). */
  readonly headersTimeoutMs: number;
  readonly events: EventBus;
  readonly logger: Logger;
  /** Overrides the tunnel's stall and close bounds (tests); the documented defaults otherwise. */
  readonly tunnel?: TunnelOptions | undefined;
  /**
   * Set when a tunnel closes at its token's `exp` (`auth.closeWebSocketsAtExpiry` on a protected
   * route), with the clock tolerance the token was checked with.
   */
  readonly tokenExpiry?: { readonly toleranceSec: number } | undefined;
  /** Open streams, sent a going-away close frame when the gateway stops accepting; none when not given. */
  readonly streams?: OpenStreams | undefined;
}

/** Backend 101 headers the gateway does not relay: its own request id replaces the backend's. */
const UPGRADE_RESPONSE_DROP = new Set([
  'x-request-id',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'content-length',
]);

/** The GUID of RFC 6455 1.3, appended to the client's key to compute `Sec-WebSocket-Accept`. */
const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** The `Sec-WebSocket-Accept` a server must answer to the client's `Sec-WebSocket-Key` (RFC 6455 4.2.2). */
export function acceptFor(key: string): string {
  return createHash('sha1')
    .update(key + WEBSOCKET_GUID)
    .digest('base64');
}

/**
 * Why a backend's 101 is not a valid answer to the handshake with `key` (RFC 6455 4.1: the
 * client fails the connection), or undefined when it is one.
 */
export function handshakeProblem(headers: IncomingHttpHeaders, key: string | string[] | undefined): string | undefined {
  if (headers.upgrade?.trim().toLowerCase() !== 'websocket')
    return `101 without Upgrade: websocket (${String(headers.upgrade)})`;
  if (typeof key !== 'string') return 'the client sent no single Sec-WebSocket-Key to check the answer against';
  const accept = headers['sec-websocket-accept'];
  if (accept === undefined) return '101 without Sec-WebSocket-Accept';
  if (accept.trim() !== acceptFor(key.trim())) return '101 with a Sec-WebSocket-Accept that does not match the key';
  return undefined;
}

/** The header list of the `101` sent to the client: the backend's, in its order and spelling. */
export function upgradeResponseHeaders(rawHeaders: readonly string[], requestId: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (!UPGRADE_RESPONSE_DROP.has(rawHeaders[i]!.toLowerCase())) out.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  out.push('x-request-id', requestId);
  return out;
}

/** The clock tolerance of tokens whose tunnels close at `exp`; undefined when this route's never do. */
export function closesAtExpiry(
  route: CompiledRoute,
  auth: PipelineConfig['settings']['auth'],
): { toleranceSec: number } | undefined {
  return route.requiresAuth && auth.closeWebSocketsAtExpiry ? { toleranceSec: auth.clockToleranceSec } : undefined;
}

/** The endpoint of an `isWebSocket` route, built once per route at config load. */
export function websocketEndpoint(route: CompiledRoute, options: WebSocketOptions): Step {
  const { upstream, headersTimeoutMs, events } = options;
  const editResponse = route.editHeaders.response;
  // The handshake is a backend call of the route; the tunnel after it is long-lived like a stream.
  const call = createRouteCall(route, {
    upstream,
    dropHeaders: options.dropHeaders,
    headersTimeoutMs,
    bodyTimeoutMs: 0,
    events,
    streaming: true,
  });
  return (ex) => {
    // The route's layers let only a handshake through (`requireUpgradeLayer`).
    const { socket, head } = ex.upgrade!;
    // The client may have left while the route was looked up or the token checked.
    if (socket.destroyed) {
      ex.upstreamFailure = 'aborted';
      return Promise.resolve();
    }
    return upgradeCall(call, ex, {
      problem: (bres) => handshakeProblem(bres.headers, ex.req.headers['sec-websocket-key']),
      // Any answer but 101: relayed as-is, and the connection ends with it.
      answered(bres) {
        const { res } = ex;
        const headers = { ...downstreamResponseHeaders(bres.headers), 'x-request-id': ex.requestId };
        if (editResponse !== undefined) editHeaderRecord(editResponse, headers, ex);
        res.writeHead(bres.statusCode ?? 502, bres.statusMessage, headers);
        // The response ends the connection once the body is through (it serves one answer).
        bres.pipe(res);
        bres.on('error', () => res.destroy());
        bres.on('close', () => {
          if (!bres.complete) res.destroy();
        });
        res.once('close', () => bres.destroy());
      },
      switched(bres, backend, backendHead) {
        let answer = upgradeResponseHeaders(bres.rawHeaders, ex.requestId);
        if (editResponse !== undefined) answer = editHeaderList(editResponse, answer, ex);
        switchProtocols(ex, answer, bres.statusMessage);
        if (backendHead.length > 0) socket.write(backendHead);
        if (head.length > 0) backend.write(head);
        openTunnel(ex, { socket, backend, backendHead }, options);
      },
    });
  };
}

/** When the tunnel of a token with these claims must close (ms since the epoch), if ever. */
function expiryOf(claims: Exchange['claims'], toleranceSec: number): number | undefined {
  const exp = claims?.exp;
  return typeof exp === 'number' && Number.isFinite(exp) ? (exp + toleranceSec) * 1000 : undefined;
}

/** node:net's cache of `remoteAddress` and `remotePort` (lib/net.js `_getpeername`). */
interface PeerAddressCache {
  _peername?: unknown;
}

interface TunnelEnds {
  readonly socket: Duplex;
  readonly backend: Duplex;
  /** What the backend sent after its 101, already written to the client. */
  readonly backendHead: Buffer;
}

/**
 * The byte tunnel between the client and the backend, reported as a stream while it is open.
 * What its closures need of the exchange is copied out first: a closure that read `ex` would keep
 * the handshake's request, response and exchange for as long as the tunnel is open.
 */
function openTunnel(ex: Exchange, ends: TunnelEnds, options: WebSocketOptions): void {
  const closeAt = options.tokenExpiry && expiryOf(ex.claims, options.tokenExpiry.toleranceSec);
  // The tunnel listens for the client socket's errors from now on (both sides go on one).
  const { errorListener } = ex.upgrade!;
  if (errorListener !== undefined) ends.socket.removeListener('error', errorListener);
  // Node keeps the peer address on the socket once read (the client's address, for the
  // handshake's forwarding headers and log): an object and a string each open tunnel would
  // hold for nothing. Node reads it again from the connection if anything asks later.
  (ends.socket as PeerAddressCache)._peername = undefined;
  relay(ex.requestId, ex.route.id, ends, options, closeAt);
}

/**
 * An open tunnel's state beyond the tunnel's own: what its close report needs, copied out of the
 * exchange, and the frame following of the going-away close (./going-away.ts), in one object
 * that registers itself with the drain and with the tunnel: no closure per tunnel.
 */
class WebSocketTunnel extends GoingAway {
  readonly opened = performance.now();
  /** Closed at its token's expiry (./tunnel-expiry.ts), logged as such. */
  expired = false;

  constructor(
    readonly requestId: string,
    readonly routeId: string,
    readonly options: WebSocketOptions,
    ends: TunnelEnds,
  ) {
    super(ends.socket, ends.backend, ends.backendHead);
  }

  tunnelClosed(end: TunnelEnd): void {
    const { events, logger, streams } = this.options;
    const { routeId } = this;
    streams?.remove(this);
    const durationMs = performance.now() - this.opened;
    events.emit('stream:close', { kind: 'websocket', routeId, durationMs });
    const fields = { reqId: this.requestId, route: routeId, durationMs: Math.round(durationMs) };
    if (this.expired) logger.debug({ ...fields, reason: 'token expired' }, 'websocket tunnel closed');
    else if (end === 'closed') logger.debug(fields, 'websocket tunnel closed');
    // A side that stopped reading is worth an operator's look: a stuck backend or client.
    else
      logger.info(
        { ...fields, notReading: end === 'a-stalled' ? 'client' : 'backend' },
        'websocket tunnel closed: one side stopped reading',
      );
  }
}

function relay(
  requestId: string,
  routeId: string,
  ends: TunnelEnds,
  options: WebSocketOptions,
  closeAt: number | undefined,
): void {
  const { socket, backend, backendHead } = ends;
  options.events.emit('stream:open', { kind: 'websocket', routeId });
  const open = new WebSocketTunnel(requestId, routeId, options, ends);
  tunnel(socket, backend, open, options.tunnel);
  options.streams?.track(open);
  if (closeAt === undefined) return;
  closeAtExpiry(socket, backend, {
    inMs: closeAt - Date.now(),
    relayed: backendHead,
    graceMs: options.tunnel?.closeGraceMs ?? CLOSE_GRACE_MS,
    onExpire: () => (open.expired = true),
  });
}
