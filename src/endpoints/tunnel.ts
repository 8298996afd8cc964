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

/**
 * Told once, when both sides are closed: a function, or an object whose `tunnelClosed` is (a
 * caller that keeps per-tunnel state in one object needs no closure for it).
 */
export type TunnelClosed = ((end: TunnelEnd) => void) | { tunnelClosed(end: TunnelEnd): void };

export interface TunnelOptions {
  /** Overrides STALL_MS (tests). */
  readonly stallMs?: number;
  /** Overrides CLOSE_GRACE_MS (tests). */
  readonly closeGraceMs?: number;
  /** Overrides PROBE_MS (tests). */
  readonly probeMs?: number;
}

interface TunnelBounds {
  readonly stallMs: number;
  readonly graceMs: number;
  readonly probeMs: number;
}

const DEFAULT_BOUNDS: TunnelBounds = { stallMs: STALL_MS, graceMs: CLOSE_GRACE_MS, probeMs: PROBE_MS };

function boundsOf(options: TunnelOptions): TunnelBounds {
  const { stallMs, closeGraceMs, probeMs } = options;
  if (stallMs === undefined && closeGraceMs === undefined && probeMs === undefined) return DEFAULT_BOUNDS;
  return { stallMs: stallMs ?? STALL_MS, graceMs: closeGraceMs ?? CLOSE_GRACE_MS, probeMs: probeMs ?? PROBE_MS };
}

/** Which tunnel a socket belongs to: the listeners below are shared by every tunnel. */
const TUNNEL = Symbol('portico.tunnel');

interface TunnelSide extends MaybeSocket {
  [TUNNEL]?: Tunnel;
}

/**
 * One tunnel's state. Its listeners are functions shared by every tunnel, which find the tunnel
 * through the socket that called them, and its timers get it as an argument: an open tunnel
 * costs one object, not a closure and a `once` wrapper per listener (docs/performance.md "Scale
 * in connections").
 */
class Tunnel {
  end: TunnelEnd = 'closed';
  open = 2;
  graceTimer: NodeJS.Timeout | undefined = undefined;
  /** The stall watch of each direction: `a` -> `b` is blocked while `b` does not drain. */
  stallToB: NodeJS.Timeout | undefined = undefined;
  probeA: NodeJS.Timeout | undefined = undefined;
  stallToA: NodeJS.Timeout | undefined = undefined;
  probeB: NodeJS.Timeout | undefined = undefined;

  constructor(
    readonly a: Duplex,
    readonly b: Duplex,
    readonly onClose: TunnelClosed | undefined,
    /** Its bounds: one object shared by every tunnel that keeps the defaults. */
    readonly bounds: TunnelBounds,
  ) {}

  other(s: Duplex): Duplex {
    return s === this.a ? this.b : this.a;
  }
}

/** Joins `a` and `b` both ways until either goes. `onClose` runs once, when both are closed. */
export function tunnel(a: Duplex, b: Duplex, onClose?: TunnelClosed, options: TunnelOptions = {}): void {
  const t = new Tunnel(a, b, onClose, boundsOf(options));
  for (const s of [a, b] as TunnelSide[]) {
    s[TUNNEL] = t;
    s.setNoDelay?.(true);
    s.setTimeout?.(0);
    s.setKeepAlive?.(true, KEEPALIVE_DELAY_MS);
  }
  a.pipe(b);
  b.pipe(a);
  for (const s of [a, b]) {
    s.on('error', onSideError);
    // pipe() pauses a sender exactly when its receiver asks it to wait, and the receiver emits
    // 'drain' when it caught up: the stall timers run only while a direction is blocked.
    s.on('pause', onSidePause);
    s.on('drain', onSideDrain);
    // A stream emits 'end' and 'close' once each: `on` spares the wrapper `once` allocates.
    s.on('end', onSideEnd);
    s.on('close', onSideClose);
  }
}

function tunnelOf(s: Duplex): Tunnel {
  return (s as TunnelSide)[TUNNEL]!;
}

function destroyBoth(t: Tunnel): void {
  t.a.destroy();
  t.b.destroy();
}

function onSideError(this: Duplex): void {
  destroyBoth(tunnelOf(this));
}

function onSideEnd(this: Duplex): void {
  const t = tunnelOf(this);
  gone(t, t.other(this), false);
}

function onSideClose(this: Duplex): void {
  const t = tunnelOf(this);
  gone(t, t.other(this), true);
  if (--t.open > 0) return;
  clearTimeout(t.graceTimer);
  stopStall(t, t.a);
  stopStall(t, t.b);
  const { onClose } = t;
  if (typeof onClose === 'function') onClose(t.end);
  else onClose?.tunnelClosed(t.end);
}

/** The other side ended or closed: `to` flushes what it can within the grace period, or goes at once. */
function gone(t: Tunnel, to: Duplex, closed: boolean): void {
  if (to.destroyed) return;
  if (to.writableNeedDrain) {
    // Its reader is not reading: the pending bytes would never leave.
    destroyBoth(t);
    return;
  }
  if (t.graceTimer === undefined) {
    t.graceTimer = setTimeout(destroyBoth, t.bounds.graceMs, t);
    t.graceTimer.unref();
  }
  if (!closed) return; // a FIN: pipe() ends `to`; the other direction may still deliver (a close frame reply)
  if (to.writableFinished) {
    to.destroy();
    return;
  }
  to.once('finish', () => to.destroy());
  // pipe() may have ended it already (the peer's FIN); the bytes before it are still flushing.
  if (!to.writableEnded) to.end();
}

/**
 * A side was paused: when it is pipe() waiting for the other side to drain, the direction is
 * blocked, and the other side gets `stallMs` to drain before both close; meanwhile this side is
 * probed for a reset every `probeMs`.
 */
function onSidePause(this: Duplex): void {
  const t = tunnelOf(this);
  const to = t.other(this);
  const fromA = this === t.a;
  if ((fromA ? t.stallToB : t.stallToA) !== undefined || !to.writableNeedDrain) return;
  const stall = setTimeout(stalled, t.bounds.stallMs, t, to);
  stall.unref();
  const probe = setInterval(probeReset, t.bounds.probeMs, this);
  probe.unref();
  if (fromA) {
    t.stallToB = stall;
    t.probeA = probe;
  } else {
    t.stallToA = stall;
    t.probeB = probe;
  }
}

/** A side drained: the direction towards it flows again. */
function onSideDrain(this: Duplex): void {
  stopStall(tunnelOf(this), this);
}

/** Stops the stall watch of the direction towards `to`. */
function stopStall(t: Tunnel, to: Duplex): void {
  if (to === t.b) {
    clearTimeout(t.stallToB);
    clearInterval(t.probeA);
    t.stallToB = t.probeA = undefined;
  } else {
    clearTimeout(t.stallToA);
    clearInterval(t.probeB);
    t.stallToA = t.probeB = undefined;
  }
}

/** `to` has not drained for `stallMs`: its reader is not reading, both sides go. */
function stalled(t: Tunnel, to: Duplex): void {
  t.end = to === t.b ? 'b-stalled' : 'a-stalled';
  destroyBoth(t);
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
