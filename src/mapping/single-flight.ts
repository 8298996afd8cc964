/**
 * Shares one in-flight call among everyone who asks for the same key while it runs.
 *
 * Design note: the map holds a key only between the call's start and its settlement, so a
 * finished call is never reused from here (caching is cache.ts's job) and a failed call is
 * forgotten at once: the next request for that key makes a new call (docs/design-decisions.md: failures
 * are not cached). The map is per process, so concurrent client requests share one call, not
 * only the items of one response.
 */
export interface SingleFlight<V> {
  /** Joins the running call for `key`, or starts `call()` as the one for it. */
  run(key: string, call: () => Promise<V>): { readonly promise: Promise<V>; readonly joined: boolean };
  /** Calls in flight. */
  readonly size: number;
}

/** A single-flight group; `call` must not reject (it resolves with its failure instead). */
export function createSingleFlight<V>(): SingleFlight<V> {
  const running = new Map<string, Promise<V>>();
  return {
    run(key, call) {
      const existing = running.get(key);
      if (existing !== undefined) return { promise: existing, joined: true };
      const promise = call().finally(() => running.delete(key));
      running.set(key, promise);
      return { promise, joined: false };
    },
    get size() {
      return running.size;
    },
  };
}
