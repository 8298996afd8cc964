import type { Exchange } from '../pipeline/step.js';
import type { EventBus } from '../observability/events.js';
import { sendError } from '../response/send-error.js';
import { classifyUpstreamError } from './upstream-error.js';

/**
 * What an endpoint does when its backend call ends in an error: record the outcome for the
 * circuit, report it, and answer 502/504 JSON, or cut the response short when its head already
 * went out.
 *
 * A client that left first is its own outcome, not the backend's: the call was cut because nobody
 * waits for it, so it is reported as 'client:closed' (never 'upstream:error') and the circuit
 * counts nothing. `clientLeft` says so when the endpoint knows it (it cancelled the call for the
 * departure); otherwise an abort after the response closed means the same.
 */
export function answerUpstreamFailure(
  ex: Exchange,
  err: Error,
  origin: string,
  events: EventBus,
  clientLeft = false,
): void {
  const { res } = ex;
  const failure = classifyUpstreamError(err);
  if (clientLeft || (failure.kind === 'aborted' && res.destroyed)) {
    if (ex.upstreamStatus === undefined) ex.upstreamFailure = 'aborted';
    events.emit('client:closed', { requestId: ex.requestId, routeId: ex.route.id, origin });
    if (!res.destroyed) res.destroy();
    return;
  }
  if (ex.upstreamStatus === undefined) ex.upstreamFailure = res.destroyed ? 'aborted' : failure.kind;
  events.emit('upstream:error', {
    requestId: ex.requestId,
    routeId: ex.route.id,
    origin,
    kind: failure.kind,
    error: err,
  });
  if (!res.headersSent && !res.destroyed) {
    ex.errorCode = failure.code;
    sendError(res, failure.code);
  } else if (!res.destroyed) {
    res.destroy();
  }
}
