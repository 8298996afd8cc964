import type { ServerResponse } from 'node:http';

/**
 * True when the whole answer went out: ended by the gateway and flushed to the client. Node's
 * HTTP/2 compatibility response also reports `writableFinished` for a stream the client reset
 * mid-answer, so `writableEnded` (only the gateway ends an answer) is checked with it.
 */
export function answerCompleted(res: ServerResponse): boolean {
  return res.writableEnded && res.writableFinished;
}
