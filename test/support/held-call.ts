/**
 * A call that stays pending until the test settles it, for code that must share one running call
 * (single-flight, a cache's concurrent loads): the test decides when the answer comes.
 */

/** The call to hand over, how often it was made, and how to answer its latest run. */
export interface HeldCall<T> {
  readonly call: () => Promise<T>;
  calls(): number;
  /** Resolves the run made last with `value`. */
  settle(value: T): void;
}

/**
 * A call whose runs wait for `settle`.
 * @example const held = heldCall<number>(); const p = flight.run('k', held.call); held.settle(5);
 */
export function heldCall<T>(): HeldCall<T> {
  let calls = 0;
  let settle!: (value: T) => void;
  return {
    call: () => {
      calls++;
      return new Promise<T>((resolve) => (settle = resolve));
    },
    calls: () => calls,
    settle: (value) => settle(value),
  };
}
