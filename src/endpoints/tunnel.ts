/**
 * A byte tunnel between two sockets, the way nginx relays a WebSocket after the handshake: frames
 * are never parsed, so text, binary, ping, pong and close frames (with their codes) pass exactly
 * as sent, and `pipe` gives backpressure both ways (a slow reader pauses the other side instead
 * of making the gateway buffer): each direction holds at most one socket's write buffer
 * (`writableHighWaterMark`) plus the chunk being written.
 *
 * Closing, the rule: once either side goes, both go, and nothing waits on a full buffer.
 * - An end (FIN) or close on one side ends the other after its pending bytes (a close frame just
 *   relayed must not be lost), but only when those bytes can still leave: when the other side's
 *   write buffer is above its high-water mark (its peer is not reading), both are destroyed at
 *   once. Either way both are destroyed at the latest CLOSE_GRACE_MS after the first end.
 * - An error on one side destroys both at once.
 * - A live tunnel has no idle timeout (an idle WebSocket is normal and must survive), but a side
 *   that does not read is not waited on forever: when one side's write buffer stays above its
 *   high-water mark for STALL_MS without draining, both sides are destroyed.
 * - While a direction is blocked its sender is not read, so the kernel's news of that sender (a
 *   reset) reaches no listener: every PROBE_MS the blocked sender is written zero bytes, which
 *   fails on a reset socket, and the error destroys both at once instead of at STALL_MS.
 * docs/streaming.md "Tunnel limits" documents these bounds.
 */
import type { Duplex } from 'node:stream';

/** The socket calls a tunnel may make when the Duplex is a TCP or TLS socket. */
interface MaybeSocket extends Duplex {
  setNoDelay?(noDelay?: boolean): unknown;
  setTimeout?(ms: number): unknown;
  setKeepAlive?(enable?: boolean, initialDelay?: number): unknown;
  /** A server-side TLS socket's TCP socket (node:tls): writes of no bytes reach the kernel only there. */
  _parent?: Duplex | null;
}

/** TCP keepalive probes on idle tunnels find peers that vanished without a FIN. */
const KEEPALIVE_DELAY_MS = 60_000;

/** Once one side ended or closed, how long the other gets to flush before both are destroyed. */
export const CLOSE_GRACE_MS = 10_000;

/** How long one side's write buffer may stay full (its reader not reading) before both close. */
export const STALL_MS = 30_000;

/** While a direction is blocked, how often its paused sender is probed for a reset. */
export const PROBE_MS = 1_000;

const NO_BYTES = Buffer.alloc(0);

/** Why a tunnel closed: a side went (`closed`), or side `a` / `b` stopped reading for too long. */
export type TunnelEnd = 'closed' | 'a-stalled' | 'b-stalled';

export interface TunnelOptions {
  /** Overrides STALL_MS (tests). */
  readonly stallMs?: number;
  /** Overrides CLOSE_GRACE_MS (tests). */
  readonly closeGraceMs?: number;
  /** Overrides PROBE_MS (tests). */
  readonly probeMs?: number;
}

/** Joins `a` and `b` both ways until either goes. `onClose` runs once, when both are closed. */
export function tunnel(a: Duplex, b: Duplex, onClose?: (end: TunnelEnd) => void, options: TunnelOptions = {}): void {
  const stallMs = options.stallMs ?? STALL_MS;
  const graceMs = options.closeGraceMs ?? CLOSE_GRACE_MS;
  const watch = { ms: stallMs, probeMs: options.probeMs ?? PROBE_MS };
  for (const s of [a, b] as MaybeSocket[]) {
    s.setNoDelay?.(true);
    s.setTimeout?.(0);
    s.setKeepAlive?.(true, KEEPALIVE_DELAY_MS);
  }
  let end: TunnelEnd = 'closed';
  let graceTimer: NodeJS.Timeout | undefined;
  const destroyBoth = () => {
    a.destroy();
    b.destroy();
  };

  a.pipe(b);
  b.pipe(a);
  a.on('error', destroyBoth);
  b.on('error', destroyBoth);
  const stopStallA = watchStall(a, b, watch, () => {
    end = 'b-stalled';
    destroyBoth();
  });
  const stopStallB = watchStall(b, a, watch, () => {
    end = 'a-stalled';
    destroyBoth();
  });

  /** The other side ended or closed: `to` flushes what it can within the grace period, or goes at once. */
  const gone = (to: Duplex, closed: boolean) => {
    if (to.destroyed) return;
    if (to.writableNeedDrain) {
      // Its reader is not reading: the pending bytes would never leave.
      destroyBoth();
      return;
    }
    if (graceTimer === undefined) {
      graceTimer = setTimeout(destroyBoth, graceMs);
      graceTimer.unref();
    }
    if (!closed) return; // a FIN: pipe() ends `to`; the other direction may still deliver (a close frame reply)
    if (to.writableFinished) {
      to.destroy();
      return;
    }
    to.once('finish', () => to.destroy());
    // pipe() may have ended it already (the peer's FIN); the bytes before it are still flushing.
    if (!to.writableEnded) to.end();
  };
  let open = 2;
  const closed = () => {
    if (--open > 0) return;
    clearTimeout(graceTimer);
    stopStallA();
    stopStallB();
    onClose?.(end);
  };
  // A stream emits 'end' and 'close' once each: `on` spares the wrapper `once` allocates, which a
  // tunnel would hold for its whole life (docs/performance.md "Scale in connections").
  a.on('end', () => gone(b, false));
  b.on('end', () => gone(a, false));
  a.on('close', () => {
    gone(b, true);
    closed();
  });
  b.on('close', () => {
    gone(a, true);
    closed();
  });
}

/**
 * Calls `onStall` when `to` has had a full write buffer for `ms` without draining. pipe() pauses
 * `from` exactly when `to` asks it to wait, and `to` emits 'drain' when it caught up, so the timers
 * run only while a direction is blocked. Returns the function that stops watching.
 */
function watchStall(
  from: Duplex,
  to: Duplex,
  { ms, probeMs }: { ms: number; probeMs: number },
  onStall: () => void,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let probe: NodeJS.Timeout | undefined;
  const stop = () => {
    clearTimeout(timer);
    clearInterval(probe);
    timer = probe = undefined;
  };
  const onPause = () => {
    if (timer !== undefined || !to.writableNeedDrain) return;
    timer = setTimeout(onStall, ms);
    timer.unref();
    probe = setInterval(() => probeReset(from as MaybeSocket), probeMs);
    probe.unref();
  };
  from.on('pause', onPause);
  to.on('drain', stop);
  return stop;
}

/**
 * A paused socket is not read, and Node watches a socket for events only while it reads or has
 * bytes to send: a reset from its peer lies unseen in the kernel. Writing zero bytes asks the
 * kernel, which fails the write on a reset socket; the socket's 'error' then closes the tunnel.
 * A socket with bytes of its own to send is already watched. A FIN is another matter: it arrives
 * behind the unread bytes and no call reports it before they are read (docs/streaming.md).
 */
function probeReset(s: MaybeSocket): void {
  if (s.writableLength !== 0 || s.writableEnded || s.destroyed) return;
  // TLS writes no record for no bytes; the TCP socket under it shares the connection and fails
  // the same way, and the TLS socket takes its error.
  const tcp = s._parent ?? s;
  if (!tcp.destroyed) tcp.write(NO_BYTES);
}
