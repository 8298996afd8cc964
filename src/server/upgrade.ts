/**
 * The server's `upgrade` event: the entry point of WebSocket requests, which never reach the
 * request handler (Node hands over the raw socket): the route's upgrade pipeline answers them
 * instead. The current route table is read on every upgrade, so a reload applies to new
 * connections while open tunnels keep going.
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
 * backend) is the route's upgrade pipeline, built by src/pipeline/build.ts.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RouteTable } from '../router/route-table.js';
import type { UpgradeExchange } from '../pipeline/types.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { requestIdFor } from '../observability/request-id.js';
import { sendUpgradeError } from './socket-response.js';
import { reportRequestEnd } from './request-end.js';
import type { Tracer } from '../observability/trace-context.js';

export interface UpgradeHandlerDeps {
  current(): RouteTable;
  readonly events: EventBus;
  readonly logger: Logger;
  /** The gateway's tracer: the backend handshake carries a trace made by its settings. */
  readonly tracer: Tracer;
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
    const upgrade = match?.kind === 'found' ? match.entry.upgrade : undefined;
    if (match?.kind !== 'found' || upgrade === undefined) {
      deps.serveAsRequest(req, socket, head);
      return;
    }
    deps.tracer.bind(req);

    // Node removed its own listeners from this socket: without one, an error would crash.
    socket.on('error', (err) => logger.debug({ err }, 'upgrade socket error'));
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const started = performance.now();
    const ux: UpgradeExchange = {
      route: match.entry.route,
      req,
      socket,
      head,
      requestId: requestIdFor(req.headers['x-request-id']),
      params: match.params,
      rawQuery: q < 0 ? '' : url.slice(q + 1),
      claimHeaders: undefined,
      claims: undefined,
      status: undefined,
      upstreamStatus: undefined,
      upstreamFailure: undefined,
      errorCode: undefined,
    };
    const report = () =>
      reportRequestEnd(
        events,
        started,
        ux.requestId,
        req.method ?? 'GET',
        path,
        ux.route.id,
        ux.status ?? CLIENT_CLOSED,
        ux.status === undefined,
        ux.errorCode,
        undefined,
      );

    if (deps.isDraining()) {
      sendUpgradeError(ux, 'GW_GATEWAY_DRAINING');
      report();
      return;
    }
    upgrade(ux).then(report, (err: unknown) => {
      // A bug, not a backend failure: log it with the request id, answer without internals.
      logger.error({ reqId: ux.requestId, route: ux.route.id, err }, 'unhandled error in websocket upgrade');
      if (ux.status === undefined) sendUpgradeError(ux, 'GW_INTERNAL');
      else socket.destroy();
      report();
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
