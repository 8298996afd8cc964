/**
 * The gateway's listeners, chosen at creation: the public one (HTTP/1.1, HTTPS, HTTP/2 over TLS
 * or h2c, by `config.tls` and `config.http2`: server/public-listener.ts) with its upgrade,
 * client-error and CONNECT listeners and its limits, and the redirect listener of an HTTPS
 * gateway (`tls.redirectPort`: 308 to https://, /health and /ready served).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { CompiledConfig } from '../config/types.js';
import type { RouteTable } from '../router/route-table.js';
import type { Logger } from '../observability/logger.js';
import { createTlsListener, redirectToHttps, type TlsListener } from '../server/tls-listener.js';
import { createPublicListener, type PublicListener } from '../server/public-listener.js';
import { createUpgradeHandler, type UpgradeHandler } from '../server/upgrade.js';
import { serveWithoutUpgrade } from '../server/ignore-upgrade.js';
import { GatewayResponse } from '../server/gateway-response.js';
import type { RequestHandler } from '../server/http-server.js';
import { sendConnectError } from '../server/protocol-checks.js';
import { applyServerLimits, clientErrorHandler, serverOptions } from '../server/limits.js';

export interface Listeners {
  readonly server: Server;
  readonly listener: PublicListener;
  /** TLS on the public listener; undefined for plain HTTP. A reload swaps certificates, not protocols. */
  readonly tls: TlsListener | undefined;
  readonly redirect: Server | undefined;
  readonly upgrades: UpgradeHandler;
  /** The public listener's open connections (TLS ones once their handshake is done), for the drain (./drain.ts). */
  readonly connections: ReadonlySet<Socket>;
}

/** Makes the listeners of `config` around the request handler; none listens yet. */
export function createListeners(
  config: CompiledConfig,
  handler: RequestHandler,
  current: () => RouteTable,
  keepAliveMs: () => number,
  logger: Logger,
): Listeners {
  const tls = config.tls === undefined ? undefined : createTlsListener(config.tls);
  // Keep-alive, client header/body timeouts, head size (server/limits.ts). Host is checked by the
  // request handler, which answers a missing one in the JSON shape.
  const httpOptions = { ...serverOptions(config.settings), ServerResponse: GatewayResponse, requireHostHeader: false };
  const listener = createPublicListener({
    handler,
    httpOptions,
    tls,
    http2: config.settings.http2,
    maxHeaderBytes: config.settings.limits.maxHeaderBytes,
    keepAliveMs,
    logger,
  });
  const server = listener.server;
  const redirect =
    config.tls?.redirectPort === undefined
      ? undefined
      : createServer(
          httpOptions,
          redirectToHttps(() => (server.address() as AddressInfo | null)?.port ?? 443, handler),
        );
  // WebSocket handshakes for WebSocket routes go through the request handler with a response on
  // their socket; other upgrades (h2c, a handshake for a standard route) are plain requests.
  const upgrades = createUpgradeHandler({
    current,
    logger,
    handler,
    Response: listener.Response,
    serveAsRequest: (req, socket, head) => serveWithoutUpgrade(server, req, socket, head),
  });
  server.on('upgrade', upgrades);
  server.on('clientError', clientErrorHandler(logger));
  applyServerLimits(server, config.settings);
  server.on('connect', sendConnectError);
  const connections = new Set<Socket>();
  // One listener for every socket, no closure or `once` wrapper per connection: an idle
  // keep-alive connection costs the gateway only what it costs Node (docs/performance.md).
  function forget(this: Socket): void {
    connections.delete(this);
  }
  server.on(tls === undefined ? 'connection' : 'secureConnection', (socket: Socket) => {
    connections.add(socket);
    socket.on('close', forget);
  });
  return { server, listener, tls, redirect, upgrades, connections };
}

/** Listens on `port` and `host`; rejects when the port cannot be had. */
export function listenOn(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
