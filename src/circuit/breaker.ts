/**
 * Circuit breaker contract. Callers ask for a permit before calling a backend and report the
 * outcome on it exactly once: `succeed()` (an answer < 500), `fail()` (5xx or no answer), or
 * `release()` (the caller gave up, e.g. the client left, or a 5xx that `failureStatuses` leaves
 * out: no outcome counted).
 *
 * This file holds the contract, the always-closed breaker of a disabled circuit, and the state
 * machine of spec section 3 (`createBreaker`).
 *
 * Transitions (docs/design-decisions.md "Circuit breaker"):
 *
 * | State     | Trigger              | Condition                                  | Next      | Effect                                   |
 * |-----------|----------------------|--------------------------------------------|-----------|------------------------------------------|
 * | Closed    | acquire              | always                                     | Closed    | permit granted                           |
 * | Closed    | succeed              |                                            | Closed    | consecutive failures reset to 0          |
 * | Closed    | fail                 | consecutive failures < maxFailures         | Closed    | count + 1                                |
 * | Closed    | fail                 | consecutive failures reach maxFailures     | Open      | timer starts                             |
 * | Open      | acquire              | less than timeoutSec since opening         | Open      | rejected (503), backend not called       |
 * | Open      | acquire              | timeoutSec elapsed (checked lazily here)   | Half-Open | then handled as Half-Open                |
 * | Half-Open | acquire              | probes in flight < halfOpenRequests        | Half-Open | probe permit granted                     |
 * | Half-Open | acquire              | probes in flight = halfOpenRequests        | Half-Open | rejected (503)                           |
 * | Half-Open | probe succeed        | successes in this period < halfOpenRequests| Half-Open | slot freed, success counted              |
 * | Half-Open | probe succeed        | successes reach halfOpenRequests           | Closed    | count reset                              |
 * | Half-Open | probe fail           |                                            | Open      | timer restarts                           |
 * | Half-Open | probe release        |                                            | Half-Open | slot freed, nothing counted              |
 *
 * A permit belongs to the period (closed, open or half-open spell) in which it was granted. An
 * outcome reported after the circuit has moved on is ignored: a request admitted while closed
 * that fails after the circuit opened must not restart the open timer, and a late success from
 * before the outage must not close a half-open circuit.
 */
import type { CircuitBreaker, CircuitPermit, CircuitState } from './types.js';

const NO_OP_PERMIT: CircuitPermit = Object.freeze({ succeed() {}, fail() {}, release() {} });

/** The breaker of a disabled circuit: always closed, no bookkeeping at all. */
export function createDisabledBreaker(origin: string): CircuitBreaker {
  return { origin, state: 'closed', acquire: () => NO_OP_PERMIT, retryAfterSec: () => 0 };
}

/** `config.circuitBreaker`. */
export interface CircuitSettings {
  readonly enabled: boolean;
  readonly maxFailures: number;
  readonly timeoutSec: number;
  readonly halfOpenRequests: number;
  /** The backend statuses that count as failures; undefined: every 5xx. */
  readonly failureStatuses?: readonly number[] | undefined;
}

export interface CircuitChange {
  readonly origin: string;
  readonly from: CircuitState;
  readonly to: CircuitState;
  readonly consecutiveFailures: number;
}

export interface BreakerOptions {
  /** `scheme://host:port` of the backend. */
  readonly origin: string;
  /**
   * Read on every call, so a reload that changes `config.circuitBreaker` reaches a breaker
   * without losing its state. While `enabled` is false the breaker admits everything.
   */
  readonly settings: CircuitSettings | (() => CircuitSettings);
  /** Milliseconds from any fixed point; monotonic by default. Tests inject their own. */
  readonly now?: () => number;
  /** Called on every transition (the registry emits `circuit:change`). */
  readonly onChange?: (change: CircuitChange) => void;
}

/** A breaker with the state metrics and the registry need beyond the contract. */
export interface StatefulBreaker extends CircuitBreaker {
  readonly consecutiveFailures: number;
  /** Back to closed with a zero count (circuit disabled, or origin gone from the config). */
  reset(): void;
}

/**
 * A breaker running the state machine of spec section 3.
 * @example
 * const b = createBreaker({ origin: 'http://users:80', settings: config.settings.circuitBreaker });
 * const permit = b.acquire();
 * if (permit === undefined) return reject503(b.retryAfterSec());
 */
export function createBreaker(options: BreakerOptions): StatefulBreaker {
  const b: BreakerState = {
    origin: options.origin,
    settingsOf: typeof options.settings === 'function' ? options.settings : constant(options.settings),
    now: options.now ?? (() => performance.now()),
    onChange: options.onChange,
    state: 'closed',
    consecutiveFailures: 0,
    openedAt: 0,
    probesInFlight: 0,
    probeSuccesses: 0,
    period: 0,
  };
  return {
    origin: b.origin,
    get state() {
      return b.state;
    },
    get consecutiveFailures() {
      return b.consecutiveFailures;
    },
    get failureStatuses() {
      return b.settingsOf().failureStatuses;
    },
    acquire() {
      return acquire(b);
    },
    retryAfterSec() {
      return retryAfterSec(b);
    },
    reset() {
      reset(b);
    },
  };
}

/** One breaker's settings and the state the table above moves. */
interface BreakerState {
  readonly origin: string;
  readonly settingsOf: () => CircuitSettings;
  readonly now: () => number;
  readonly onChange: ((change: CircuitChange) => void) | undefined;
  state: CircuitState;
  consecutiveFailures: number;
  openedAt: number;
  probesInFlight: number;
  probeSuccesses: number;
  // Incremented on every transition: a permit only counts in the period that granted it.
  period: number;
}

function acquire(b: BreakerState): CircuitPermit | undefined {
  const settings = b.settingsOf();
  if (!settings.enabled) return NO_OP_PERMIT;
  if (b.state === 'closed') return permit(b);
  // Open -> Half-Open happens here, on the first request after the timeout: no timers.
  if (b.state === 'open') {
    if (b.now() - b.openedAt < settings.timeoutSec * 1000) return undefined;
    moveTo(b, 'half-open');
  }
  if (b.probesInFlight >= settings.halfOpenRequests) return undefined;
  b.probesInFlight++;
  return permit(b);
}

function retryAfterSec(b: BreakerState): number {
  if (!b.settingsOf().enabled || b.state === 'closed') return 0;
  if (b.state === 'half-open') return 1;
  const remainingMs = b.openedAt + b.settingsOf().timeoutSec * 1000 - b.now();
  return Math.max(1, Math.ceil(remainingMs / 1000));
}

function reset(b: BreakerState): void {
  if (b.state !== 'closed') moveTo(b, 'closed');
  else {
    b.period++;
    b.consecutiveFailures = 0;
  }
}

function moveTo(b: BreakerState, to: CircuitState): void {
  const from = b.state;
  b.state = to;
  b.period++;
  b.probesInFlight = 0;
  b.probeSuccesses = 0;
  if (to === 'open') b.openedAt = b.now();
  if (to === 'closed') b.consecutiveFailures = 0;
  b.onChange?.({ origin: b.origin, from, to, consecutiveFailures: b.consecutiveFailures });
}

function onSucceed(b: BreakerState, granted: number): void {
  if (granted !== b.period) return;
  b.consecutiveFailures = 0;
  if (b.state === 'half-open') {
    b.probesInFlight--;
    b.probeSuccesses++;
    if (b.probeSuccesses >= b.settingsOf().halfOpenRequests) moveTo(b, 'closed');
  }
}

function onFail(b: BreakerState, granted: number): void {
  if (granted !== b.period) return;
  b.consecutiveFailures++;
  // A failed probe reopens at once; closed opens after maxFailures in a row.
  if (b.state === 'half-open' || b.consecutiveFailures >= b.settingsOf().maxFailures) moveTo(b, 'open');
}

function onRelease(b: BreakerState, granted: number): void {
  if (granted === b.period && b.state === 'half-open') b.probesInFlight--;
}

function permit(b: BreakerState): CircuitPermit {
  const granted = b.period;
  let settled = false;
  // Exactly one outcome per permit: later calls are ignored, so a caller's double report cannot
  // free a probe slot twice. Closures, not methods: callers may pass `permit.succeed` around.
  const once = (f: (b: BreakerState, granted: number) => void) => () => {
    if (settled) return;
    settled = true;
    f(b, granted);
  };
  return { succeed: once(onSucceed), fail: once(onFail), release: once(onRelease) };
}

function constant<T>(value: T): () => T {
  return () => value;
}
