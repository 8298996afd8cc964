/**
 * The close frame a stopping gateway sends a WebSocket client: code 1001, "going away" (RFC 6455
 * 7.4.1), so that the client sees a clean close and reconnects elsewhere. The tunnel relays
 * bytes without parsing frames (./tunnel.ts), and a frame of the gateway's own may only go
 * between two of the backend's: `FrameBoundary` (./frame-boundary.ts) follows the frames the
 * backend sends, so that the end of the current frame is known when the drain comes.
 *
 * Going away: the backend's bytes stop being relayed at the end of its current frame, the close
 * frame follows, and what the backend sends after it is dropped. The client answers with its own
 * close frame, which the tunnel relays to the backend as any frame: the backend sees the client
 * close with 1001 and closes, and the tunnel closes both sides (./tunnel.ts).
 */
import type { Duplex } from 'node:stream';
import { closeFrame, FrameBoundary } from './frame-boundary.js';

/** RFC 6455 7.4.1: the endpoint is going away (a server shutting down). */
export const GOING_AWAY_FRAME = closeFrame(1001, 'going away');

/** The going-away state of the backend socket it follows: the follower below is shared. */
const FOLLOWED = Symbol('portico.goingAway');

interface FollowedSocket extends Duplex {
  [FOLLOWED]?: GoingAway;
}

/**
 * Follows the frames `backend` sends to `client` (after `sent`, the bytes already relayed), and
 * sends the client the going-away close frame at the next frame end when `endStream` is called
 * (it registers with the drain as it is: ./open-streams.ts). One object per tunnel, the frame
 * boundary's fields its own, and one `data` listener shared by every tunnel: each open tunnel
 * has one of these (docs/performance.md "Scale in connections").
 */
export class GoingAway extends FrameBoundary {
  private gone = false;
  /** Set at drain time: the backend's bytes after the close frame are dropped. */
  closing = false;

  constructor(
    readonly client: Duplex,
    readonly backend: Duplex,
    sent: Buffer,
  ) {
    super();
    this.advance(sent);
    (backend as FollowedSocket)[FOLLOWED] = this;
    backend.on('data', followFrames);
  }

  endStream(): void {
    const { client, backend } = this;
    // A tunnel closing already (its token expired: ./tunnel-expiry.ts) gets no second close frame.
    if (this.gone || client.destroyed || !client.writable) return;
    this.gone = true;
    backend.unpipe(client);
    backend.off('data', followFrames);
    this.closing = this.atBoundary;
    if (this.closing) client.write(GOING_AWAY_FRAME);
    // Keeps reading the backend (its close reply, then its end) and relays the rest of its current frame.
    backend.on('data', finishFrame);
    backend.resume();
  }
}

function followFrames(this: FollowedSocket, chunk: Buffer): void {
  this[FOLLOWED]!.advance(chunk);
}

/** After `endStream`: the rest of the backend's current frame, then the close frame, then nothing. */
function finishFrame(this: FollowedSocket, chunk: Buffer): void {
  const g = this[FOLLOWED]!;
  if (g.closing) return;
  const n = g.advance(chunk, true);
  g.client.write(n === chunk.length ? chunk : chunk.subarray(0, n));
  if (!g.atBoundary) return;
  g.closing = true;
  g.client.write(GOING_AWAY_FRAME);
}
