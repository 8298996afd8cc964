/**
 * `config.writeTimeoutSec`: a client that takes none of the bytes waiting for it for that long is
 * disconnected. Only a stall counts: a connection with nothing to send (an idle SSE stream, a
 * quiet WebSocket, a request waiting for its backend) and a connection whose client keeps
 * reading, however slowly, are never cut, so long-lived streams live as long as they flow.
 *
 * Design: one sweep per server, a quarter of the limit apart (at most a second), over the open
 * connections. A connection is stalled while bytes wait in its write buffer and the count of
 * bytes the client has taken (written minus still buffered) does not move; it is destroyed once
 * that lasted the limit. Nothing runs per request, and nothing at all when the key is unset.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

interface Stall {
  taken: number;
  since: number;
}

interface Watch {
  timeoutMs: number;
  timer: NodeJS.Timeout | undefined;
  readonly sockets: Set<Socket>;
  readonly stalls: Map<Socket, Stall>;
}

const watches = new WeakMap<Server, Watch>();

/** Sets (or with 0, removes) the write-stall limit of `server`; a later call replaces the limit. */
export function configureWriteTimeout(server: Server, timeoutMs: number, now: () => number = Date.now): void {
  let watch = watches.get(server);
  if (watch === undefined) {
    if (timeoutMs <= 0) return;
    const w: Watch = { timeoutMs, timer: undefined, sockets: new Set(), stalls: new Map() };
    watch = w;
    watches.set(server, w);
    server.on('connection', (socket: Socket) => {
      if (w.timeoutMs <= 0) return;
      w.sockets.add(socket);
      socket.once('close', () => {
        w.sockets.delete(socket);
        w.stalls.delete(socket);
      });
    });
    server.once('close', () => stop(w));
  }
  stop(watch);
  watch.timeoutMs = timeoutMs;
  if (timeoutMs <= 0) {
    watch.sockets.clear();
    return;
  }
  const w = watch;
  w.timer = setInterval(() => sweep(w, now()), Math.min(1_000, Math.max(50, Math.floor(timeoutMs / 4))));
  w.timer.unref();
}

function stop(watch: Watch): void {
  if (watch.timer !== undefined) clearInterval(watch.timer);
  watch.timer = undefined;
  watch.stalls.clear();
}

function sweep(watch: Watch, at: number): void {
  for (const socket of watch.sockets) {
    const waiting = socket.writableLength;
    if (waiting === 0 || socket.destroyed) {
      watch.stalls.delete(socket);
      continue;
    }
    const taken = socket.bytesWritten - waiting;
    const stall = watch.stalls.get(socket);
    if (stall === undefined || stall.taken !== taken) watch.stalls.set(socket, { taken, since: at });
    else if (at - stall.since >= watch.timeoutMs) {
      watch.stalls.delete(socket);
      socket.destroy();
    }
  }
}
