/**
 * The request body limits of a route: its size (`maxBodyBytes`: 413 at once from
 * `Content-Length`, or when the streamed bytes of a chunked body pass it, counted as they flow,
 * never buffered) and the client's silence while the gateway waits for it
 * (`timeouts.clientBodySec`: 408). The connection closes after either refusal.
 */
import type { Exchange, Layer } from '../pipeline/types.js';
import { sendError } from '../response/send-error.js';
import type { ErrorCode } from '../response/errors.js';
import { answerCompleted } from '../response/answer-completed.js';

/**
 * Per-route request body guard: size limit (413) and body silence (408). Requests without a
 * body pass with two header reads.
 */
export function bodyLimitLayer(maxBytes: number, bodyIdleMs: number): Layer {
  return (next) => (ex) => {
    const { req } = ex;
    const length = req.headers['content-length'];
    if (length === undefined) {
      if (req.headers['transfer-encoding'] === undefined) return next(ex);
      countChunkedBody(ex, maxBytes);
    } else if (length === '0') {
      return next(ex);
    } else if (Number(length) > maxBytes) {
      // Refused before reading: the connection closes rather than draining a body we refuse.
      sendLimitError(ex, 'GW_BODY_TOO_LARGE');
      return Promise.resolve();
    }
    // A small body usually arrives in the same read as the headers, but Node marks the request
    // complete only after this handler returns: look once the current read is parsed, and arm
    // the silence timer (a socket timer and four listeners) only for a body still on its way.
    queueMicrotask(() => {
      if (!req.complete && !ex.res.writableEnded) watchBodySilence(ex, bodyIdleMs);
    });
    return next(ex);
  };
}

function sendLimitError(ex: Exchange, code: ErrorCode): void {
  const { req, res } = ex;
  ex.errorCode = code;
  // Once the answer is out and the connection closed, end the request stream too: an upstream
  // call still reading the body then aborts instead of waiting forever (Node only aborts
  // requests whose response is still pending when their socket closes).
  req.socket.once('close', () => {
    if (!req.complete) req.destroy();
  });
  if (!res.headersSent) sendError(res, code, { connection: 'close' });
  else res.destroy();
}

/**
 * Counts the bytes of a chunked body as they stream to whoever reads it (undici, a mapping
 * call...). The stream is paused first so that adding a 'data' listener does not start the flow
 * before the endpoint reads: every reader sees every chunk. Past the limit: 413 and the
 * connection closes, which aborts the upstream request.
 */
function countChunkedBody(ex: Exchange, maxBytes: number): void {
  const { req } = ex;
  let seen = 0;
  const onData = (chunk: Buffer) => {
    seen += chunk.length;
    if (seen <= maxBytes) return;
    req.off('data', onData);
    req.pause();
    sendLimitError(ex, 'GW_BODY_TOO_LARGE');
  };
  req.pause();
  req.on('data', onData);
}

/**
 * 408 when the client stops sending its body for `idleMs` while the gateway waits for it.
 * A socket that is quiet because the gateway stopped reading (backpressure from a slow backend,
 * or the request still queued for a connection) is not the client's fault: the timer re-arms.
 *
 * Once the body is complete the limit no longer applies: the wait for the backend is bounded by
 * `timeouts.backendSec`. A complete body may still be unread (the request queued for a pool
 * connection), so no 'end' came to stop the timer; when it fires, Node emits 'timeout' on the
 * response only (never on a complete request) and destroys the socket unless someone listens,
 * which would drop a valid request without an answer. The response listener turns it off.
 */
function watchBodySilence(ex: Exchange, idleMs: number): void {
  const { req, res } = ex;
  // The request's timer is its socket's on HTTP/1.1 and its stream's on HTTP/2.
  const onTimeout = () => {
    if (req.isPaused() || req.readableLength > 0) {
      req.setTimeout(idleMs);
      return;
    }
    cleanup();
    sendLimitError(ex, 'GW_CLIENT_TIMEOUT');
  };
  // Node emits on the request first (while incomplete, handled above), then on the response.
  const onResponseTimeout = () => {
    if (req.complete) cleanup();
  };
  const cleanup = () => {
    req.off('timeout', onTimeout);
    req.off('end', cleanup);
    res.off('timeout', onResponseTimeout);
    res.off('close', cleanup);
    // Once the response is done Node owns the socket's timer (keepAliveTimeout): leave it.
    if (!req.socket.destroyed && !answerCompleted(res)) req.setTimeout(0);
  };
  req.on('timeout', onTimeout);
  res.on('timeout', onResponseTimeout);
  req.once('end', cleanup);
  res.once('close', cleanup);
  req.setTimeout(idleMs);
}
