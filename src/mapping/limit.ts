/**
 * A concurrency limit: at most `max` tasks run at once, the others start in arrival order.
 *
 * Design note: fetch-calls.ts makes one per response and mapping origin, sized to the origin's
 * connection pool (`limits.connectionsPerOrigin`), so a response naming hundreds of URLs keeps
 * at most one pool's worth of calls in flight and never floods the pool's queue: other requests
 * to that origin wait for one free connection, not behind every call of that response.
 */
export interface Limiter {
  /** Runs `task` when a slot is free; resolves or rejects as the task does. */
  run<T>(task: () => Promise<T>): Promise<T>;
}

/** Creates a limiter of `max` (>= 1) concurrent tasks. */
export function createLimiter(max: number): Limiter {
  let active = 0;
  // A FIFO as an array and a read index: shift() would move every waiting entry each time.
  let waiting: (() => void)[] = [];
  let head = 0;
  const release = (): void => {
    if (head < waiting.length) {
      const start = waiting[head++]!;
      if (head === waiting.length) {
        waiting = [];
        head = 0;
      }
      // The slot passes straight to the next task: `active` is unchanged.
      start();
    } else {
      active--;
    }
  };
  const go = <T>(task: () => Promise<T>): Promise<T> => {
    let p: Promise<T>;
    try {
      p = task();
    } catch (err) {
      p = Promise.reject(err as Error);
    }
    return p.finally(release);
  };
  return {
    run(task) {
      if (active < max) {
        active++;
        return go(task);
      }
      return new Promise<void>((resolve) => waiting.push(resolve)).then(() => go(task));
    },
  };
}
