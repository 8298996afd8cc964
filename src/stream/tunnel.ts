/**
 * A byte tunnel between two sockets, the way nginx relays a WebSocket after the handshake: frames
 * are never parsed, so text, binary, ping, pong and close frames (with their codes) pass exactly
 * as sent, and `pipe` gives backpressure both ways (a slow reader pauses the other side instead
 * of making the gateway buffer).
 *
 * Closing: an end (FIN) on one side ends the other (pipe). When one side closes cleanly the
 * other is ended once its pending bytes are written (a close frame just relayed must not be
 * lost), then destroyed; an error on one side destroys the other at once. No timeout applies
 * to a live tunnel (issue #6: idle WebSocket connections must survive).
 */
import type { Duplex } from 'node:stream';

/** The socket calls a tunnel may make when the Duplex is a TCP or TLS socket. */
interface MaybeSocket extends Duplex {
  setNoDelay?(noDelay?: boolean): unknown;
  setTimeout?(ms: number): unknown;
  setKeepAlive?(enable?: boolean, initialDelay?: number): unknown;
}

/** TCP keepalive probes on idle tunnels find peers that vanished without a FIN. */
const KEEPALIVE_DELAY_MS = 60_000;

/** Once one side closed, how long the other gets to flush before it is destroyed anyway. */
const FLUSH_GRACE_MS = 10_000;

/** Joins `a` and `b` both ways until either closes. `onClose` runs once, when both are closed. */
export function tunnel(a: Duplex, b: Duplex, onClose?: () => void): void {
  for (const s of [a, b] as MaybeSocket[]) {
    s.setNoDelay?.(true);
    s.setTimeout?.(0);
    s.setKeepAlive?.(true, KEEPALIVE_DELAY_MS);
  }
  a.pipe(b);
  b.pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.once('close', () => finish(b));
  b.once('close', () => finish(a));
  if (onClose !== undefined) {
    let open = 2;
    const closed = () => {
      if (--open === 0) onClose();
    };
    a.once('close', closed);
    b.once('close', closed);
  }
}

/** Ends `s` after its pending writes, then destroys it (at once when nothing is pending). */
function finish(s: Duplex): void {
  if (s.destroyed) return;
  if (s.writableFinished) {
    s.destroy();
    return;
  }
  const timer = setTimeout(() => s.destroy(), FLUSH_GRACE_MS);
  timer.unref();
  s.once('finish', () => {
    clearTimeout(timer);
    s.destroy();
  });
  s.once('close', () => clearTimeout(timer));
  // pipe() may have ended it already (the peer's FIN); the bytes before it are still flushing.
  if (!s.writableEnded) s.end();
}
