/**
 * The server's `upgrade` event: the entry point of WebSocket requests, which never reach the
 * request handler or a pipeline (Node hands over the raw socket). The current route table is read
 * on every upgrade, so a reload applies to new connections while open tunnels keep going.
 *
 * What an upgrade may be answered here, before any route endpoint runs (JSON errors written
 * onto the socket, then the connection closes; the choice is documented in docs/streaming.md):
 *   gateway draining                              503 GW_GATEWAY_DRAINING
 *   not `GET` + `Upgrade: websocket` (e.g. h2c)   400 GW_UPGRADE_UNSUPPORTED
 *   no route for the path                         404 GW_ROUTE_NOT_FOUND
 *   the path has routes, but no GET route         405 GW_METHOD_NOT_ALLOWED (Allow)
 *   a GET route that is not `isWebSocket`         400 GW_UPGRADE_UNSUPPORTED
 * Everything after that (auth, circuit, backend) is the route's endpoint: src/stream/websocket.ts.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RouteEntry, RouteTable } from '../router/route-table.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { requestIdFor } from '../observability/request-id.js';
import type { ErrorCode } from '../response/errors.js';
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
    // Node removed its own listeners from this socket: without one, an error would crash.
    socket.on('error', (err) => logger.debug({ err }, 'upgrade socket error'));
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const started = performance.now();
    const requestId = requestIdFor(req.headers['x-request-id']);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const rawQuery = q < 0 ? '' : url.slice(q + 1);
    let status: number | undefined;
    let errorCode: string | undefined;
    const report = (routeId: string | undefined) => {
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
    const refuse = (code: ErrorCode, routeId?: string, extraHeaders?: Record<string, string>) => {
      const r = errorResponse(code, { ...extraHeaders, 'x-request-id': requestId });
      status = r.status;
      errorCode = code;
      respondOnSocket(socket, r.status, r.headers, r.body);
      report(routeId);
    };

    if (deps.isDraining()) return refuse('GW_GATEWAY_DRAINING');
    if (!isWebSocketUpgrade(req)) return refuse('GW_UPGRADE_UNSUPPORTED');
    const match = deps.current().match('GET', path);
    if (match.kind === 'not-found') return refuse('GW_ROUTE_NOT_FOUND');
    if (match.kind === 'method-not-allowed') return refuse('GW_METHOD_NOT_ALLOWED', undefined, { allow: match.allow });
    const entry = match.entry as UpgradeRouteEntry;
    const routeId = entry.route.id;
    if (entry.upgrade === undefined) return refuse('GW_UPGRADE_UNSUPPORTED', routeId);

    const ux: UpgradeExchange = {
      route: entry.route,
      req,
      socket,
      head,
      requestId,
      params: match.params,
      rawQuery,
      claimHeaders: undefined,
      status: undefined,
      upstreamStatus: undefined,
      upstreamFailure: undefined,
      errorCode: undefined,
    };
    const finish = () => {
      status = ux.status;
      errorCode = ux.errorCode;
      report(routeId);
    };
    entry.upgrade(ux).then(finish, (err: unknown) => {
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
