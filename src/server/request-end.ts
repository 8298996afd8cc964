/**
 * The `request:end` report of every answer: the request handler (./http-server.ts) reports each
 * request once, plain or upgrade, with the same fields and the same duration rounding.
 */
import type { ServerResponse } from 'node:http';
import type { EventBus } from '../observability/events.js';
import type { TraceContext } from '../observability/trace-context.js';
import { answerCompleted } from '../response/answer-completed.js';

/**
 * Reports one answered request. `started` is the `performance.now()` reading taken when the
 * request arrived; `aborted` is true when the client did not get the whole answer.
 */
export function reportRequestEnd(
  events: EventBus,
  started: number,
  requestId: string,
  method: string,
  path: string,
  routeId: string | undefined,
  status: number,
  aborted: boolean,
  errorCode: string | undefined,
  trace: TraceContext | undefined,
): void {
  events.emit('request:end', {
    requestId,
    method,
    routeId,
    path,
    status,
    durationMs: Math.round((performance.now() - started) * 100) / 100,
    aborted,
    errorCode,
    trace,
  });
}

/** Reports a request answered through its ServerResponse, once that response closed. */
export function reportResponseEnd(
  events: EventBus,
  res: ServerResponse,
  started: number,
  requestId: string,
  method: string,
  path: string,
  routeId: string | undefined,
  errorCode: string | undefined,
  trace?: TraceContext,
): void {
  reportRequestEnd(
    events,
    started,
    requestId,
    method,
    path,
    routeId,
    res.statusCode,
    !answerCompleted(res),
    errorCode,
    trace,
  );
}
