/**
 * Circuit breaker contract. Callers ask for a permit before calling a backend and report the
 * outcome on it exactly once: `succeed()` (an answer < 500), `fail()` (5xx or no answer), or
 * `release()` (the caller gave up, e.g. the client left: no outcome counted).
 *
 * This file holds the contract and the always-closed breaker used while `circuitBreaker.enabled`
 * is false. The state machine of spec section 3 is issue #5.
 */
export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitPermit {
  succeed(): void;
  fail(): void;
  release(): void;
}

export interface CircuitBreaker {
  readonly origin: string;
  readonly state: CircuitState;
  /** A permit to call the backend, or undefined when the circuit rejects the call. */
  acquire(): CircuitPermit | undefined;
  /** Seconds until the circuit may admit a probe (for `Retry-After`). */
  retryAfterSec(): number;
}

const NO_OP_PERMIT: CircuitPermit = Object.freeze({ succeed() {}, fail() {}, release() {} });

/** The breaker of a disabled circuit: always closed, no bookkeeping at all. */
export function createDisabledBreaker(origin: string): CircuitBreaker {
  return { origin, state: 'closed', acquire: () => NO_OP_PERMIT, retryAfterSec: () => 0 };
}
