import type { ServerResponse } from 'node:http';

/**
 * True when the whole answer went out: ended by the gateway and flushed to the client. An HTTP/2
 * response reports its stream's `writableFinished` (server/h2-response.ts), also true for a
 * stream the client reset mid-answer, so `writableEnded` (only the gateway ends an answer) is
 * checked with it.
 */
export function answerCompleted(res: ServerResponse): boolean {
  return res.writableEnded && res.writableFinished;
}
