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
import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { CompiledRoute } from '../config/types.js';
import type { Exchange, Layer, Step } from '../pipeline/types.js';
import type { Upstream } from '../upstream/upstream.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import {
  backendHeaders,
  backendPath,
  callEnded,
  callOutcome,
  callStarted,
  createRouteCall,
  recordFailure,
  reportResponse,
  type RouteCall,
} from '../upstream/backend-call.js';
import { downstreamResponseHeaders, type RequestDropSet } from '../upstream/forward-headers.js';
import { editHeaderList, editHeaderRecord } from '../upstream/header-edits.js';
import { switchProtocols } from '../server/socket-response.js';
import { sendError } from '../response/send-error.js';
import { tunnel, type TunnelOptions } from './tunnel.js';

export interface WebSocketOptions {
  readonly upstream: Upstream;
  /** Client headers never forwarded (from the pipeline deps). */
  readonly dropHeaders: RequestDropSet;
  /** No answer to the upgrade request within this time: 504 (`timeouts.backendSec`). */
  readonly handshakeTimeoutMs: number;
  readonly events: EventBus;
  readonly logger: Logger;
  /** Overrides the tunnel's stall and close bounds (tests); the documented defaults otherwise. */
  readonly tunnel?: TunnelOptions | undefined;
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

/** The flat header list of the upgrade request to the backend: a backend call's, plus the upgrade. */
export function backendUpgradeHeaders(
  call: Pick<RouteCall, 'route' | 'upstream' | 'dropHeaders' | 'identityEncoding'>,
  ex: Pick<Exchange, 'req' | 'requestId' | 'claimHeaders' | 'claims' | 'params'>,
  hostHeader = call.upstream.origin.hostHeader,
): string[] {
  const headers = backendHeaders(call, ex, hostHeader);
  // Connection and Upgrade are hop-by-hop, so the forwarding rules dropped them: this hop upgrades too.
  headers.push('connection', 'Upgrade', 'upgrade', 'websocket');
  return headers;
}

/** The endpoint of an `isWebSocket` route, built once per route at config load. */
export function websocketEndpoint(route: CompiledRoute, options: WebSocketOptions): Step {
  const { upstream, handshakeTimeoutMs, events, logger, tunnel: tunnelOptions } = options;
  const { origin } = upstream;
  const tls = upstream.tlsConnect;
  const editResponse = route.editHeaders.response;
  // The handshake is a backend call of the route; the tunnel after it is long-lived like a stream.
  const call = createRouteCall(route, {
    upstream,
    dropHeaders: options.dropHeaders,
    headersTimeoutMs: handshakeTimeoutMs,
    bodyTimeoutMs: 0,
    events,
    streaming: true,
  });

  return (ex) => {
    const { res } = ex;
    // The route's layers let only a handshake through (`requireUpgradeLayer`).
    const { socket } = ex.upgrade!;
    // The client may have left while the route was looked up or the token checked.
    if (socket.destroyed) {
      ex.upstreamFailure = 'aborted';
      return Promise.resolve();
    }

    const started = performance.now();
    // Counted on the upstream from the handshake until the tunnel (or the answer) closes.
    const pool = callStarted(upstream, call.streaming);
    socket.once('close', () => callEnded(pool));
    return new Promise<void>((resolve) => {
      let settled = false;
      // Ends the handshake once its outcome is on the exchange, where the circuit layer reads it.
      const done = () => {
        if (settled) return;
        settled = true;
        socket.removeListener('close', onClientClose);
        resolve();
      };
      // The target's address: a named upstream's pick, else the service itself.
      const target = pool.origin;
      const breq: ClientRequest = (target.protocol === 'https:' ? httpsRequest : httpRequest)({
        host: target.hostname,
        port: target.port,
        method: 'GET',
        path: backendPath(route, ex),
        headers: backendUpgradeHeaders(call, ex, target.hostHeader),
        setHost: false,
        agent: false,
        timeout: handshakeTimeoutMs,
        ...(tls === undefined ? {} : { ca: tls.ca, rejectUnauthorized: tls.rejectUnauthorized }),
        // A target resolved from a host name (upstream/dns-targets.ts) is still that name to TLS.
        ...(target.serverName === undefined ? {} : { servername: target.serverName }),
      });

      // The client gave up during the handshake: drop the backend attempt, count nothing.
      const onClientClose = () => {
        if (settled) return;
        ex.upstreamFailure = 'aborted';
        done();
        breq.destroy();
      };
      socket.once('close', onClientClose);

      breq.on('timeout', () => {
        breq.destroy(
          Object.assign(new Error(`no upgrade answer within ${handshakeTimeoutMs} ms`), { code: 'ETIMEDOUT' }),
        );
      });

      breq.on('error', (err) => {
        if (settled) return;
        // The target failed the handshake unless the client left first.
        if (!socket.destroyed) callOutcome(pool, true);
        const code = recordFailure(ex, err, origin.key, events, false, socket.destroyed);
        if (code !== undefined) {
          ex.errorCode = code;
          sendError(res, code);
        }
        done();
      });

      // Any answer but 101: relayed as-is, and the connection ends with it.
      breq.on('response', (bres) => {
        if (settled) {
          bres.destroy();
          return;
        }
        const status = bres.statusCode ?? 502;
        callOutcome(pool, status >= 500);
        ex.upstreamStatus = status;
        done();
        reportResponse(call, 'websocket', status, started);
        const headers = { ...downstreamResponseHeaders(bres.headers), 'x-request-id': ex.requestId };
        if (editResponse !== undefined) editHeaderRecord(editResponse, headers, ex);
        res.writeHead(status, bres.statusMessage, headers);
        // The response ends the connection once the body is through (it serves one answer).
        bres.pipe(res);
        bres.on('error', () => res.destroy());
        bres.on('close', () => {
          if (!bres.complete) res.destroy();
        });
        res.once('close', () => bres.destroy());
      });

      breq.on('upgrade', (bres, backend, backendHead) => {
        if (settled || socket.destroyed) {
          backend.destroy();
          return;
        }
        const problem = handshakeProblem(bres.headers, ex.req.headers['sec-websocket-key']);
        if (problem !== undefined) {
          backend.destroy();
          callOutcome(pool, true);
          ex.upstreamFailure = 'other';
          events.emit('upstream:error', {
            requestId: ex.requestId,
            routeId: route.id,
            origin: origin.key,
            kind: 'protocol',
            error: new Error(problem),
          });
          ex.errorCode = 'GW_UPSTREAM_BAD_UPGRADE';
          sendError(res, 'GW_UPSTREAM_BAD_UPGRADE');
          done();
          return;
        }
        callOutcome(pool, false);
        ex.upstreamStatus = bres.statusCode ?? 101;
        done();
        const opened = performance.now();
        reportResponse(call, 'websocket', 101, started);
        let answer = upgradeResponseHeaders(bres.rawHeaders, ex.requestId);
        if (editResponse !== undefined) answer = editHeaderList(editResponse, answer, ex);
        switchProtocols(ex, answer, bres.statusMessage);
        if (backendHead.length > 0) socket.write(backendHead);
        const { head } = ex.upgrade!;
        if (head.length > 0) backend.write(head);
        events.emit('stream:open', { kind: 'websocket', routeId: route.id });
        tunnel(
          socket,
          backend,
          (end) => {
            const durationMs = performance.now() - opened;
            events.emit('stream:close', { kind: 'websocket', routeId: route.id, durationMs });
            if (end === 'closed')
              logger.debug(
                { reqId: ex.requestId, route: route.id, durationMs: Math.round(durationMs) },
                'websocket tunnel closed',
              );
            // A side that stopped reading is worth an operator's look: a stuck backend or client.
            else
              logger.info(
                {
                  reqId: ex.requestId,
                  route: route.id,
                  durationMs: Math.round(durationMs),
                  notReading: end === 'a-stalled' ? 'client' : 'backend',
                },
                'websocket tunnel closed: one side stopped reading',
              );
          },
          tunnelOptions,
        );
      });

      breq.end();
    });
  };
}

/**
 * The gate of a WebSocket route: a plain request (no handshake, or one Node did not hand over as
 * an upgrade) is answered 426 with `Upgrade: websocket`, before the circuit, so that it neither
 * takes a probe slot nor reaches the backend (docs/design-decisions.md).
 */
export function requireUpgradeLayer(): Layer {
  return (next) => (ex) => {
    if (ex.upgrade !== undefined) return next(ex);
    ex.errorCode = 'GW_UPGRADE_REQUIRED';
    sendError(ex.res, 'GW_UPGRADE_REQUIRED', { upgrade: 'websocket', connection: 'Upgrade' });
    return Promise.resolve();
  };
}
