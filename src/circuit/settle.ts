/**
 * What a call's outcome means to its circuit (docs/design-decisions.md "Circuit breaker"): an
 * answer >= 500 or no answer is a failure, any other answer a success; a call given up by the
 * gateway or its client, or no backend call at all, counts nothing. The one rule for the circuit
 * layer of a route and for the JSON calls that hold their own permit.
 */
import type { UpstreamFailureKind } from '../upstream/types.js';
import type { CircuitPermit } from './types.js';

/** A call's outcome as recorded: the answer's status, or why there was none. */
export interface CallResult {
  readonly upstreamStatus?: number | undefined;
  readonly upstreamFailure?: UpstreamFailureKind | undefined;
}

/** Settles `permit` by the call's outcome. */
export function settlePermit(permit: CircuitPermit, result: CallResult): void {
  if (result.upstreamStatus !== undefined) {
    if (result.upstreamStatus >= 500) permit.fail();
    else permit.succeed();
  } else if (result.upstreamFailure !== undefined && result.upstreamFailure !== 'aborted') {
    permit.fail();
  } else {
    permit.release();
  }
}
