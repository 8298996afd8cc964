/**
 * What a call's outcome means to its circuit (docs/design-decisions.md "Circuit breaker"): an
 * answer >= 500 (or, with `failureStatuses`, one it lists: ./failure-statuses.ts) or no answer is
 * a failure, an answer below 500 a success; a call given up by the gateway or its client, a 5xx
 * the list leaves out, or no backend call at all, counts nothing. The one rule for the circuit
 * layer of a route and for the JSON calls that hold their own permit.
 */
import type { UpstreamFailureKind } from '../upstream/types.js';
import type { CircuitPermit } from './types.js';
import { statusOutcome } from './failure-statuses.js';

/** A call's outcome as recorded: the answer's status, or why there was none. */
export interface CallResult {
  readonly upstreamStatus?: number | undefined;
  readonly upstreamFailure?: UpstreamFailureKind | undefined;
}

/** Settles `permit` by the call's outcome; `failureStatuses` undefined: every 5xx is a failure. */
export function settlePermit(
  permit: CircuitPermit,
  result: CallResult,
  failureStatuses?: readonly number[] | undefined,
): void {
  if (result.upstreamStatus !== undefined) {
    permit[statusOutcome(result.upstreamStatus, failureStatuses)]();
  } else if (result.upstreamFailure !== undefined && result.upstreamFailure !== 'aborted') {
    permit.fail();
  } else {
    permit.release();
  }
}
