/**
 * The circuit step of a route: no permit means 503 at once and the backend is not even connected
 * to (docs/design-decisions.md "Circuit breaker"); otherwise the request goes on and its outcome
 * is reported on the permit (circuit/settle.ts says what counts). A WebSocket endpoint resolves once the client has its answer to the
 * handshake, so a tunnel that stays open for hours holds no probe slot.
 */
import type { CompiledRoute, Layer } from '../pipeline/types.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import type { CircuitBreaker } from '../circuit/types.js';
import { settlePermit } from '../circuit/settle.js';
import { sendError } from '../response/send-error.js';

export interface CircuitLayerOptions {
  /**
   * Report the outcome as soon as the response starts (the endpoint calls `ex.onResponseStart`)
   * instead of when the exchange ends. For SSE routes, where the rule counts the outcome of
   * opening the stream: a healthy stream that stays open for minutes must not hold a half-open
   * probe slot all that time.
   */
  readonly settleOnResponseStart?: boolean;
  /** The route's own `circuitBreaker.failureStatuses`; undefined: the origin's (its breaker's). */
  readonly failureStatuses?: readonly number[] | undefined;
}

/** Rejects calls while the route's circuit is open and reports every call's outcome to it. */
export function circuitLayer(breaker: CircuitBreaker, options: CircuitLayerOptions = {}): Layer {
  const early = options.settleOnResponseStart === true;
  const own = options.failureStatuses;
  return (next) => async (ex) => {
    // Read per request: a reload that changes the origin's list reaches the running routes.
    const failureStatuses = own ?? breaker.failureStatuses;
    const permit = breaker.acquire();
    if (permit === undefined) {
      ex.errorCode = 'GW_CIRCUIT_OPEN';
      ex.req.resume();
      sendError(ex.res, 'GW_CIRCUIT_OPEN', { 'retry-after': retryAfter(breaker) });
      return;
    }
    if (early) {
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        settlePermit(permit, ex, failureStatuses);
      };
      // Chained: an outer layer may release something at the same moment (layers/admission.ts).
      const before = ex.onResponseStart;
      ex.onResponseStart =
        before === undefined
          ? settle
          : () => {
              before();
              settle();
            };
      try {
        await next(ex);
      } finally {
        settle();
      }
      return;
    }
    try {
      await next(ex);
    } finally {
      // Also when next throws: a permit never settled would keep a half-open probe slot forever.
      settlePermit(permit, ex, failureStatuses);
    }
  };
}

/** Whole seconds, at least 1, until the circuit may admit a call again. */
function retryAfter(breaker: CircuitBreaker): number {
  return Math.max(1, Math.ceil(breaker.retryAfterSec()));
}

/**
 * The circuit layer of a route, or of one arm of a split: none when breakers are disabled, nor
 * for an aggregated route, whose backends each answer to their own circuit
 * (upstream/call/json-call.ts). After auth: a request without a valid token never takes a probe slot.
 * SSE and gRPC calls settle once the answer's head came: a long stream holds no probe slot.
 */
export function routeCircuit(
  route: Pick<CompiledRoute, 'kind' | 'origin' | 'circuitFailureStatuses'>,
  upstreams: Pick<UpstreamRegistry, 'forOrigin'>,
  enabled: boolean,
): Layer[] {
  if (route.kind === 'aggregate' || !enabled) return [];
  return [
    circuitLayer(upstreams.forOrigin(route.origin).breaker, {
      settleOnResponseStart: route.kind === 'sse' || route.kind === 'grpc',
      failureStatuses: route.circuitFailureStatuses,
    }),
  ];
}
