/**
 * How a gateway stops without losing a request (docs/lifecycle.md "Stopping"). In order:
 * 1. `/ready` answers 503 and every answer says the connection ends with it (`Connection:
 *    close`; GOAWAY on HTTP/2, for the sessions open now and each new one after its first
 *    request): the request handler reads the gateway's draining flag, set before this runs.
 * 2. The drain delay (`config.shutdown.drainDelaySec`, 0 by default): serving goes on, so that
 *    load balancers stop choosing the replica and clients leave their connections cleanly.
 * 3. The listener stops accepting, without Node's closing of idle connections; SSE streams end,
 *    WebSocket clients get a going-away close frame, HTTP/2 sessions a GOAWAY.
 * 4. Until in-flight requests and tunnels are done and every connection closed, within the drain
 *    limit: the idle HTTP/1.1 connections are closed once none of the listener's connections has
 *    received a byte for QUIET_MS (and each was idle since the drain began or for QUIET_MS). A
 *    connection that carried a request during the drain was told by its answer and closes after
 *    it; while clients still send, their idle connections may be next, and closing one then
 *    loses the request on its way (what `server.close()`, closing them all at once, does).
 * 5. What is left (past the limit) is cut.
 */
import { Server as NetServer, type Socket } from 'node:net';
import type { Server } from 'node:http';
import type { Logger } from '../observability/logger.js';
import type { PublicListener } from '../server/public-listener.js';
import type { UpgradeHandler } from '../server/upgrade.js';
import type { OpenStreams } from '../endpoints/open-streams.js';

/** How long an idle connection must have received nothing before the drain closes it. */
export const QUIET_MS = 250;

/** How long WebSocket clients get to answer the going-away close frame before their tunnels are cut. */
export const GOING_AWAY_MS = 2_000;

/** How often the drain looks at its connections. */
const SWEEP_MS = 25;

/** A gap between two looks this long means the event loop stalled, and bytes may wait unread. */
const STALL_MS = 100;

export interface DrainParts {
  readonly server: Server;
  readonly listener: PublicListener;
  /** The HTTP connections of the public listener (./listeners.ts). */
  readonly connections: ReadonlySet<Socket>;
  readonly upgrades: UpgradeHandler;
  readonly streams: OpenStreams;
  readonly inFlight: { readonly count: number };
  /** Called when the listener stops accepting: the other listeners close then. */
  stopOthers(): Promise<void>;
}

export interface DrainTiming {
  /** Milliseconds of serving on before the listener stops accepting. */
  readonly delayMs: number;
  /** Milliseconds in-flight requests get to finish once the listener stopped accepting. */
  readonly limitMs: number;
}

/** What Node keeps on a socket it serves HTTP/1.1 on; `parser` is gone once it was upgraded. */
interface ServedSocket extends Socket {
  parser?: unknown;
  _httpMessage?: unknown;
}

/** Runs steps 2 to 5 above; resolves once every connection of the listener is closed. */
export async function drain(parts: DrainParts, timing: DrainTiming, logger: Logger): Promise<void> {
  const { server, listener } = parts;
  const began = Date.now();
  const quiet: Quiet = { idle: new Map(), seen: new Set(), lastActivity: began, lastSweep: began };
  watchQuiet(parts.connections, quiet, began);
  listener.closeSessions();
  if (timing.delayMs > 0) await serveOn(server, timing.delayMs, logger);
  // Connections the kernel completed but the gateway has not taken are reset with the listener:
  // closing right after the poll phase, which takes all that wait, leaves the fewest behind.
  await new Promise((resolve) => setImmediate(resolve));
  // node:http's close() would also destroy every idle connection at once: net's alone stops accepting.
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  let allClosed = false;
  void closed.then(() => (allClosed = true));
  parts.streams.endAll();
  listener.closeSessions();
  await parts.stopOthers();
  logger.info({ inFlight: parts.inFlight.count, tunnels: parts.upgrades.open() }, 'stopped accepting');
  const stopped = Date.now();
  const deadline = stopped + timing.limitMs;
  while (!allClosed && Date.now() < deadline) {
    if (Date.now() - stopped >= GOING_AWAY_MS) parts.upgrades.closeAll();
    watchQuiet(parts.connections, quiet, Date.now(), true);
    await new Promise((resolve) => setTimeout(resolve, SWEEP_MS));
    // After the poll phase, so that what arrived while the timer waited has been read.
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (!allClosed)
    logger.warn({ inFlight: parts.inFlight.count, tunnels: parts.upgrades.open() }, 'drain limit reached: cutting');
  parts.upgrades.closeAll();
  listener.closeAllConnections();
  // What neither node:http nor a live HTTP/2 session holds any more: the socket of a session the
  // client closed gracefully stays half-open, and the listener's close would wait for it forever.
  for (const socket of parts.connections) socket.destroy();
  await closed;
}

/**
 * Step 2: serves on for `delayMs`. New connections in its second half mean that what is in front
 * does not stop choosing the replica (it reads no readiness): they would only race the listener's
 * close, and the operator is told which setting fits (docs/deploy.md "Rolling restarts").
 */
async function serveOn(server: Server, delayMs: number, logger: Logger): Promise<void> {
  logger.info({ delayMs }, 'drain delay: /ready answers 503, serving on with Connection: close');
  await new Promise((resolve) => setTimeout(resolve, delayMs / 2));
  let late = 0;
  const count = () => void late++;
  server.on('connection', count);
  await new Promise((resolve) => setTimeout(resolve, delayMs - delayMs / 2));
  server.off('connection', count);
  if (late > 0)
    logger.warn(
      { newConnections: late, lastMs: delayMs / 2 },
      'new connections kept coming during the drain delay: the load balancer does not read /ready (docs/deploy.md "Rolling restarts")',
    );
}

/** When each idle HTTP/1.1 connection last received a byte, and when any of them last did. */
interface Quiet {
  readonly idle: Map<Socket, { bytes: number; since: number }>;
  readonly seen: Set<Socket>;
  lastActivity: number;
  lastSweep: number;
}

/**
 * Notes what the HTTP/1.1 connections received; with `close`, closes the idle ones once no
 * connection has received anything for QUIET_MS. Waiting for the whole listener to be quiet, not
 * each connection alone, matters behind a load balancer that keeps choosing this replica: it
 * picks its pooled connections one after another, each told by its answer, and an idle one is
 * closed only once it stopped picking any. HTTP/2 and upgraded connections are left alone.
 */
function watchQuiet(connections: ReadonlySet<Socket>, quiet: Quiet, now: number, close = false): void {
  // A stalled event loop saw nothing, which does not mean nothing came: it counts as activity.
  let active = now - quiet.lastSweep > STALL_MS;
  quiet.lastSweep = now;
  for (const socket of quiet.seen) if (!connections.has(socket)) active = true;
  quiet.seen.clear();
  for (const socket of connections as ReadonlySet<ServedSocket>) {
    if (socket.destroyed || socket.parser == null) continue;
    quiet.seen.add(socket);
    const seen = quiet.idle.get(socket);
    if (socket._httpMessage != null) {
      quiet.idle.delete(socket);
      active = true;
    } else if (seen === undefined || seen.bytes !== socket.bytesRead) {
      quiet.idle.set(socket, { bytes: socket.bytesRead, since: now });
      if (seen !== undefined) active = true;
    }
  }
  if (active) quiet.lastActivity = now;
  if (!close || now - quiet.lastActivity < QUIET_MS) return;
  for (const [socket, { since }] of quiet.idle) {
    if (now - since < QUIET_MS) continue;
    quiet.idle.delete(socket);
    // Everything it sent was read: the close is a FIN, not a reset.
    socket.destroy();
  }
}
