/**
 * Closing a tunnel when the token that opened it expires (`auth.closeWebSocketsAtExpiry`,
 * docs/streaming.md "Token expiry"): one timer per tunnel, cleared when either side closes, and
 * no work per message beyond following the backend's frame boundaries (./frame-boundary.ts).
 *
 * At expiry the client's bytes stop reaching the backend (they are read and dropped, so that the
 * client's own close is seen), the backend's frame in flight is relayed to its end, then the
 * client gets a close frame 1008 "token expired" and a FIN, and the backend connection is closed.
 * The backend gets no close frame: the client's bytes may have stopped mid-frame, so it sees what
 * it sees when a client vanishes. A frame that does not end within `graceMs` is not waited for:
 * both sides are destroyed.
 */
import type { Duplex } from 'node:stream';
import { closeFrame, FrameBoundary } from './frame-boundary.js';

/** RFC 6455 7.4.1: the endpoint received a message that violates its policy. */
const POLICY_VIOLATION = 1008;
const EXPIRED = closeFrame(POLICY_VIOLATION, 'token expired');

/** setTimeout's longest delay; a later expiry re-arms the timer. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ExpiryOptions {
  /** Milliseconds from now until the token expires (0 or less: at once). */
  readonly inMs: number;
  /** The backend's bytes already written to the client before the tunnel (after its 101). */
  readonly relayed: Buffer;
  /** Longest wait for the backend's frame in flight to end. */
  readonly graceMs: number;
  /** Called once, when the tunnel expires. */
  readonly onExpire: () => void;
}

/**
 * Closes the tunnel between `client` and `backend` (piped both ways by ./tunnel.ts) when the
 * token expires. Call it right after the tunnel is set up, before any backend byte is read.
 */
export function closeAtExpiry(client: Duplex, backend: Duplex, options: ExpiryOptions): void {
  const frames = new FrameBoundary();
  frames.advance(options.relayed);
  const follow = (chunk: Buffer) => void frames.advance(chunk);
  backend.on('data', follow);
  let timer: NodeJS.Timeout | undefined;
  const arm = (ms: number) => {
    timer = setTimeout(ms > MAX_TIMER_MS ? () => arm(ms - MAX_TIMER_MS) : expire, Math.min(ms, MAX_TIMER_MS));
    timer.unref();
  };
  const stop = () => {
    clearTimeout(timer);
    backend.off('data', follow);
  };
  client.once('close', stop);
  backend.once('close', stop);

  function expire(): void {
    stop();
    if (client.destroyed || backend.destroyed) return;
    options.onExpire();
    client.unpipe(backend);
    client.resume();
    backend.unpipe(client);
    if (frames.atBoundary) {
      finish();
      return;
    }
    // Half a frame is out: the client reads a close frame written now as its payload.
    const grace = setTimeout(() => {
      client.destroy();
      backend.destroy();
    }, options.graceMs);
    grace.unref();
    const rest = (chunk: Buffer) => {
      const n = frames.advance(chunk, true);
      const more = client.write(n === chunk.length ? chunk : chunk.subarray(0, n));
      if (frames.atBoundary) {
        backend.off('data', rest);
        clearTimeout(grace);
        finish();
      } else if (!more) {
        backend.pause();
        client.once('drain', () => backend.resume());
      }
    };
    backend.on('data', rest);
    backend.once('close', () => clearTimeout(grace));
    backend.resume();
  }

  function finish(): void {
    client.end(EXPIRED);
    backend.destroy();
  }

  arm(Math.max(0, options.inMs));
}
