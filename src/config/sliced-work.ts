/**
 * Work written once and run two ways: whole, in one call (start-up, `portico check`), or in
 * slices of about a millisecond with the event loop turning between them (a reload while requests
 * are served, docs/performance.md "Scale in routes"). A piece of work is a generator that
 * `yield`s wherever it may be interrupted, usually after each route; it holds no state the
 * requests served meanwhile read, so interrupting it changes nothing they see.
 */

/** Work that may be interrupted at each `yield` and returns `T`. */
export type Work<T> = Generator<void, T, undefined>;

/**
 * The longest stretch a sliced run holds the event loop, in ms: a request arriving meanwhile
 * waits for at most about this (plus one interruption point's own work), far below a p99. Under
 * load every slice is followed by the requests that came meanwhile, so a shorter slice makes a
 * reload take longer on a busy gateway (the trade measured in docs/performance.md "Scale in routes").
 */
export const SLICE_MS = 1;

/** Runs `work` in one call. */
export function runWhole<T>(work: Work<T>): T {
  for (;;) {
    const step = work.next();
    if (step.done === true) return step.value;
  }
}

/** Runs `work` in stretches of about `sliceMs`, yielding to the event loop (I/O first) between them. */
export async function runInSlices<T>(work: Work<T>, sliceMs = SLICE_MS): Promise<T> {
  let until = performance.now() + sliceMs;
  for (;;) {
    const step = work.next();
    if (step.done === true) return step.value;
    if (performance.now() >= until) {
      await nextTurn();
      until = performance.now() + sliceMs;
    }
  }
}

/** `items.map(fn)`, interruptible after each item. */
export function* mapEach<A, B>(items: readonly A[], fn: (item: A, index: number) => B): Work<B[]> {
  const out = new Array<B>(items.length);
  for (let i = 0; i < items.length; i++) {
    out[i] = fn(items[i]!, i);
    yield;
  }
  return out;
}

/** Resolves after the event loop has polled for I/O once (setImmediate runs after the poll phase). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
