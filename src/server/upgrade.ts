/**
 * The server's `upgrade` event. Node hands every request with `Connection: upgrade` over with the
 * raw socket, outside the request handler. A WebSocket handshake (`GET` + `Upgrade: websocket`)
 * for a path whose GET route is a WebSocket route gets a response bound to its socket
 * (./socket-response.ts) and goes through the same request handler as any request: the same
 * protocol checks, the same route pipeline, the same report. The current route table is read on
 * every upgrade, so a reload applies to new connections while open tunnels keep going.
 *
 * Every other request that carries `Upgrade` (`h2c` from Java's HttpClient or `curl --http2`, a
 * WebSocket handshake for a standard route or an unknown path) is served as a plain HTTP/1.1
 * request by the normal request handler, the `Upgrade` ignored (RFC 9110 7.8;
 * ./ignore-upgrade.ts): the client gets the route's ordinary answer (a 404, a 405, a backend's
 * 200, a 426 on a WebSocket route...) as with nginx. The choice is documented in
 * docs/streaming.md.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RouteTable } from '../router/route-table.js';
import type { Logger } from '../observability/logger.js';
import { pathOf, type RequestHandler } from './http-server.js';
import { afterAnswersBefore, responseOnSocket, type ResponseClass } from './socket-response.js';

export interface UpgradeHandlerDeps {
  current(): RouteTable;
  readonly logger: Logger;
  /** The request handler every request goes through. */
  readonly handler: RequestHandler;
  /** The listener's response class, bound to the upgrade's socket. */
  readonly Response: ResponseClass;
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

/** True for `GET` with `Upgrade: websocket` (RFC 6455 4.1; the token is case-insensitive). */
export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade;
  return req.method === 'GET' && upgrade !== undefined && upgrade.trim().toLowerCase() === 'websocket';
}

/** True when `req` is a WebSocket handshake for a WebSocket route of `table`. */
function upgradesOn(table: RouteTable, req: IncomingMessage): boolean {
  if (!isWebSocketUpgrade(req)) return false;
  const match = table.match('GET', pathOf(req.url ?? '/'), req.headers.host);
  return match.kind === 'found' && match.entry.route.kind === 'websocket';
}

/** Builds the listener for `server.on('upgrade', ...)`. */
export function createUpgradeHandler(deps: UpgradeHandlerDeps): UpgradeHandler {
  const { logger } = deps;
  const sockets = new Set<Duplex>();
  // Listeners shared by every socket, made once: a closure made per upgrade would keep the
  // handshake's request and head alive for as long as its tunnel is open.
  const onSocketError = (err: Error) => logger.debug({ err }, 'upgrade socket error');
  function forget(this: Duplex): void {
    sockets.delete(this);
  }

  const handler = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    if (!upgradesOn(deps.current(), req)) {
      deps.serveAsRequest(req, socket, head);
      return;
    }
    // Node removed its own listeners from this socket: without one, an error would crash.
    socket.on('error', onSocketError);
    sockets.add(socket);
    // 'close' comes once: `on` spares the wrapper `once` allocates for each tunnel's life.
    socket.on('close', forget);
    // A pipelined answer still going out on this connection goes first, whole.
    afterAnswersBefore(socket, req, () => {
      const res = responseOnSocket(deps.Response, req, socket);
      deps.handler(req, res, { socket, head, switched: false, errorListener: onSocketError });
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
