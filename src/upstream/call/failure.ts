/**
 * One failure path for every call: what a call that got no answer records on its exchange, what
 * it reports ('upstream:error', or 'client:closed' when the client left first), and what the
 * client gets (502/504 JSON, or an answer cut short once its head went out). Also the reasons the
 * gateway itself gives a call up.
 */
import type { Exchange } from '../../pipeline/types.js';
import type { EventBus } from '../../observability/events.js';
import type { ErrorCode } from '../../response/errors.js';
import { sendError } from '../../response/send-error.js';
import { answersAsGrpc } from '../../response/grpc-status.js';
import { classifyUpstreamError } from '../upstream-error.js';
import type { BackendPool } from '../types.js';
import { callOutcome } from './pool-count.js';
import type { RouteCall } from './route-call.js';

/** What a call's outcome is recorded on: an HTTP exchange, or an upgrade's counterpart. */
export type CallRecord = Pick<Exchange, 'requestId' | 'upstreamStatus' | 'upstreamFailure' | 'errorCode'> & {
  readonly route: { readonly id: string };
};

/**
 * Records a call that ended in an error and reports it; returns the gateway error to answer, or
 * undefined when there is nobody to answer.
 *
 * A client that left first is its own outcome, not the backend's: the call was cut because nobody
 * waits for it, so it is reported as 'client:closed' (never 'upstream:error') and the circuit
 * counts nothing. `clientLeft` says so when the caller knows it (it cancelled the call for the
 * departure); otherwise an abort after the client's side closed means the same.
 */
export function recordFailure(
  rec: CallRecord,
  err: unknown,
  origin: string,
  events: EventBus,
  clientLeft: boolean,
  clientGone: boolean,
): ErrorCode | undefined {
  const failure = classifyUpstreamError(err);
  if (clientLeft || (failure.kind === 'aborted' && clientGone)) {
    if (rec.upstreamStatus === undefined) rec.upstreamFailure = 'aborted';
    events.emit('client:closed', { requestId: rec.requestId, routeId: rec.route.id, origin });
    return undefined;
  }
  if (rec.upstreamStatus === undefined) rec.upstreamFailure = clientGone ? 'aborted' : failure.kind;
  events.emit('upstream:error', {
    requestId: rec.requestId,
    routeId: rec.route.id,
    origin,
    kind: failure.kind,
    error: err,
  });
  return clientGone ? undefined : failure.code;
}

/**
 * The failure path of an HTTP call: recorded and reported (`recordFailure`), then answered 502/504
 * JSON, or the response cut short when its head already went out; a gRPC call's answer ends with
 * the status in its trailers instead (response/grpc-status.ts), which its client can read.
 */
export function sendUpstreamFailure(
  ex: Exchange,
  err: unknown,
  origin: string,
  events: EventBus,
  clientLeft: boolean,
): void {
  const { res } = ex;
  const code = recordFailure(ex, err, origin, events, clientLeft, res.destroyed);
  if (code !== undefined && (!res.headersSent || answersAsGrpc(res))) {
    ex.errorCode = code;
    sendError(res, code);
  } else if (!res.destroyed) {
    res.destroy();
  }
}

/** Why a call was given up because its client left (applied at dispatch when not connected yet). */
export class ClientGone extends Error {
  readonly code = 'UND_ERR_ABORTED';
  constructor() {
    super('client closed the connection');
  }
}

/** The attempt was given up to be sent again, to another target. */
export class RetryAttempt extends Error {
  readonly code = 'UND_ERR_ABORTED';
  constructor() {
    super('answer dropped: the call goes to another target');
  }
}

/** The queue deadline passed: classified as a timeout, like undici's own headers timeout. */
export class QueueTimeout extends Error {
  readonly code = 'ETIMEDOUT';
  constructor() {
    super('no connection and no response headers within backendSec');
  }
}

/**
 * The failure path of a route's call: the target is blamed (its passive health) only for a call
 * that got no answer and was not given up by the gateway; then `sendUpstreamFailure`.
 */
export function failCall(
  pool: BackendPool | undefined,
  ex: Exchange,
  err: Error,
  call: Pick<RouteCall, 'upstream' | 'events'>,
  clientLeft: boolean,
): void {
  if (
    pool !== undefined &&
    ex.upstreamStatus === undefined &&
    !clientLeft &&
    !(err instanceof ClientGone) &&
    !(err instanceof QueueTimeout)
  )
    callOutcome(pool, true);
  sendUpstreamFailure(ex, err, call.upstream.origin.key, call.events, clientLeft);
}
