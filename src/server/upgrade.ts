/**
 * The server's `upgrade` event: the entry point of WebSocket requests, which never reach the
 * request handler or a pipeline (Node hands over the raw socket). The current route table is read
 * on every upgrade, so a reload applies to new connections while open tunnels keep going.
 *
 * Only a WebSocket handshake (`GET` + `Upgrade: websocket`) for a path whose GET route is
 * `isWebSocket` is upgraded. Every other request that carries `Upgrade` (`h2c` from Java's
 * HttpClient or `curl --http2`, a WebSocket handshake for a standard route or an unknown path)
 * is served as a plain HTTP/1.1 request by the normal request handler, the `Upgrade` ignored
 * (RFC 9110 7.8; ./ignore-upgrade.ts): the client gets the route's ordinary answer (a 404, a 405,
 * a backend's 200, a 426 on a WebSocket route...) as with nginx. The choice is documented in
 * docs/streaming.md.
 *
 * A WebSocket upgrade for a WebSocket route while the gateway drains: 503 GW_GATEWAY_DRAINING,
 * written onto the socket. Everything after that (rate limit, Origin check, auth, circuit,
 * backend) is the route's upgrade endpoint: guards/guards.ts and src/stream/websocket.ts.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RouteEntry, RouteTable } from '../router/route-table.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { requestIdFor } from '../observability/request-id.js';
import { errorResponse } from '../response/send-error.js';
import { answerError, type UpgradeExchange, type UpgradeStep } from '../stream/websocket.js';
import { respondOnSocket } from './socket-response.js';

/** A route table entry of a WebSocket route carries its upgrade endpoint (see gateway.ts). */
export interface UpgradeRouteEntry extends RouteEntry {
  readonly upgrade?: UpgradeStep;
}

export interface UpgradeHandlerDeps {
  current(): RouteTable;
  readonly events: EventBus;
  readonly logger: Logger;
  isDraining(): boolean;
  /** Serves a request whose upgrade the gateway declines as a plain request (./ignore-upgrade.ts). */
  serveAsRequest(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

export interface UpgradeHandler {
  (req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Client sockets being upgraded or tunneled right now. */
  readonly open: () => number;
  /** Closes every tunnel and pending upgrade (gateway shutdown, after the drain period). */
  closeAll(): void;
}

/** Status reported for an upgrade whose client left before it was answered (nginx's 499). */
const CLIENT_CLOSED = 499;

/** True for `GET` with `Upgrade: websocket` (RFC 6455 4.1; the token is case-insensitive). */
export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade;
  return req.method === 'GET' && upgrade !== undefined && upgrade.trim().toLowerCase() === 'websocket';
}

/** Builds the listener for `server.on('upgrade', ...)`. */
export function createUpgradeHandler(deps: UpgradeHandlerDeps): UpgradeHandler {
  const { events, logger } = deps;
  const sockets = new Set<Duplex>();

  const handler = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const match = isWebSocketUpgrade(req) ? deps.current().match('GET', path) : undefined;
    const entry = match?.kind === 'found' ? (match.entry as UpgradeRouteEntry) : undefined;
    if (match?.kind !== 'found' || entry?.upgrade === undefined) {
      deps.serveAsRequest(req, socket, head);
      return;
    }
    const upgrade = entry.upgrade;

    // Node removed its own listeners from this socket: without one, an error would crash.
    socket.on('error', (err) => logger.debug({ err }, 'upgrade socket error'));
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const started = performance.now();
    const requestId = requestIdFor(req.headers['x-request-id']);
    const routeId = entry.route.id;
    let status: number | undefined;
    let errorCode: string | undefined;
    const report = () => {
      events.emit('request:end', {
        requestId,
        method: req.method ?? 'GET',
        routeId,
        path,
        status: status ?? CLIENT_CLOSED,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        aborted: status === undefined,
        errorCode,
      });
    };

    if (deps.isDraining()) {
      const r = errorResponse('GW_GATEWAY_DRAINING', { 'x-request-id': requestId });
      status = r.status;
      errorCode = 'GW_GATEWAY_DRAINING';
      respondOnSocket(socket, r.status, r.headers, r.body);
      report();
      return;
    }

    const ux: UpgradeExchange = {
      route: entry.route,
      req,
      socket,
      head,
      requestId,
      params: match.params,
      rawQuery: q < 0 ? '' : url.slice(q + 1),
      claimHeaders: undefined,
      status: undefined,
      upstreamStatus: undefined,
      upstreamFailure: undefined,
      errorCode: undefined,
    };
    const finish = () => {
      status = ux.status;
      errorCode = ux.errorCode;
      report();
    };
    upgrade(ux).then(finish, (err: unknown) => {
      // A bug, not a backend failure: log it with the request id, answer without internals.
      logger.error({ reqId: requestId, route: routeId, err }, 'unhandled error in websocket upgrade');
      if (ux.status === undefined) answerError(ux, 'GW_INTERNAL');
      else socket.destroy();
      finish();
    });
  };

  return Object.assign(handler, {
    open: () => sockets.size,
    closeAll() {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
  });
}
