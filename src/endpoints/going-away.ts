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

/**
 * Follows the frames `backend` sends to `client` (after `sent`, the bytes already relayed);
 * returns the function that sends the client the going-away close frame at the next frame end.
 */
export function goingAwayFor(client: Duplex, backend: Duplex, sent: Buffer): () => void {
  const boundary = new FrameBoundary();
  boundary.advance(sent);
  const follow = (chunk: Buffer) => void boundary.advance(chunk);
  backend.on('data', follow);
  let gone = false;
  return () => {
    // A tunnel closing already (its token expired: ./tunnel-expiry.ts) gets no second close frame.
    if (gone || client.destroyed || !client.writable) return;
    gone = true;
    backend.unpipe(client);
    backend.off('data', follow);
    let closing = boundary.atBoundary;
    if (closing) client.write(GOING_AWAY_FRAME);
    // Keeps reading the backend (its close reply, then its end) and relays the rest of its current frame.
    backend.on('data', (chunk: Buffer) => {
      if (closing) return;
      const n = boundary.advance(chunk, true);
      client.write(n === chunk.length ? chunk : chunk.subarray(0, n));
      if (!boundary.atBoundary) return;
      closing = true;
      client.write(GOING_AWAY_FRAME);
    });
    backend.resume();
  };
}
