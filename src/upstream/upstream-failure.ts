import type { Exchange } from '../pipeline/step.js';
import type { EventBus } from '../observability/events.js';
import { sendError } from '../response/send-error.js';
import { classifyUpstreamError } from './upstream-error.js';

/**
 * What a streaming endpoint does when its backend call ends in an error: record the outcome for
 * the circuit (`aborted` when the client left first), report it, and answer 502/504 JSON, or cut
 * the response short when its head already went out.
 */
export function answerUpstreamFailure(ex: Exchange, err: Error, origin: string, events: EventBus): void {
  const { res } = ex;
  const failure = classifyUpstreamError(err);
  if (ex.upstreamStatus === undefined) ex.upstreamFailure = res.destroyed ? 'aborted' : failure.kind;
  if (failure.kind !== 'aborted' || !res.destroyed) {
    events.emit('upstream:error', { requestId: ex.requestId, routeId: ex.route.id, origin, kind: failure.kind, error: err });
  }
  if (!res.headersSent && !res.destroyed) {
    ex.errorCode = failure.code;
    sendError(res, failure.code);
  } else {
    res.destroy();
  }
}
