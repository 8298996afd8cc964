/**
 * A millisecond clock that only moves when the test says so, for `startGateway(yaml, env, { now })`:
 * circuit open periods, mapping-cache TTLs and the JWKS retry backoff then pass at once, with no
 * sleep and no race against a loaded machine.
 */
export interface ManualClock {
  /** The current reading, in milliseconds. */
  readonly now: () => number;
  /** Moves the clock forward by `ms`. */
  advance(ms: number): void;
}

/** Starts far from zero: the mapping cache needs a clock that never reads 0. */
export function createManualClock(startMs = 1_000_000): ManualClock {
  let t = startMs;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
    },
  };
}
