/**
 * The composition root: registries made once per process (upstreams with their pools and
 * circuits), a route table per configuration, the HTTP server, reload and graceful shutdown.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CompiledConfig } from './config/compile.js';
import { createRouteTable, type RouteTable } from './router/route-table.js';
import { buildPipeline, createPipelineDeps } from './pipeline/build.js';
import { createUpstreamRegistry, type UpstreamRegistry } from './upstream/upstream.js';
import { createEventBus, type EventBus } from './observability/events.js';
import { createLogger, logEvents, type Logger } from './observability/logger.js';
import { createRequestHandler } from './server/http-server.js';

export interface GatewayOptions {
  readonly config: CompiledConfig;
  readonly logger?: Logger;
  /** Milliseconds in-flight requests get to finish on close (DECISIONS.md: 15 s). */
  readonly drainTimeoutMs?: number;
}

export interface Gateway {
  readonly server: Server;
  readonly events: EventBus;
  readonly logger: Logger;
  readonly upstreams: UpstreamRegistry;
  /** The configuration being served. */
  config(): CompiledConfig;
  listen(port?: number, host?: string): Promise<AddressInfo>;
  /** Swaps in a new configuration; in-flight requests finish on the old one. */
  reload(config: CompiledConfig): void;
  /** Stops accepting, lets in-flight requests finish (bounded), closes pools. */
  close(): Promise<void>;
}

export function createGateway(options: GatewayOptions): Gateway {
  const logger = options.logger ?? createLogger();
  const events = createEventBus();
  logEvents(events, logger);
  const upstreams = createUpstreamRegistry({ connections: options.config.settings.limits.connectionsPerOrigin });

  let config = options.config;
  let table = buildTable(config);
  let draining = false;
  const inFlight = { count: 0 };

  function buildTable(c: CompiledConfig): RouteTable {
    const deps = createPipelineDeps(c, { upstreams, events, logger });
    return createRouteTable(c.routes.map((route) => ({ route, run: buildPipeline(route, deps) })));
  }

  const server = createServer(
    {
      // Longer than the 60 s idle timeout of common load balancers, so they close first.
      keepAliveTimeout: 72_000,
      headersTimeout: 60_000,
      requestTimeout: 0,
    },
    createRequestHandler({ current: () => table, events, logger, isDraining: () => draining, inFlight }),
  );
  server.on('clientError', (err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
    logger.debug({ err }, 'client error');
  });

  return {
    server,
    events,
    logger,
    upstreams,
    config: () => config,
    listen(port = config.settings.port, host = config.settings.host) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    reload(next) {
      const nextTable = buildTable(next);
      table = nextTable;
      config = next;
    },
    async close() {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = Date.now() + (options.drainTimeoutMs ?? 15_000);
      while (inFlight.count > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
        server.closeIdleConnections();
      }
      server.closeAllConnections();
      await closed;
      await upstreams.close();
    },
  };
}
