/**
 * The contract of a circuit breaker, shared by the breaker (breaker.ts), its registry, the layer
 * that applies it and every call that reports to it. Types only, so any module can import it.
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
  /** The statuses that count as failures on this origin; undefined: every 5xx (./failure-statuses.ts). */
  readonly failureStatuses?: readonly number[] | undefined;
}
