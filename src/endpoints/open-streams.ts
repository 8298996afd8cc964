/**
 * Long-lived responses the gateway ends itself when it starts draining. An open SSE stream never
 * finishes on its own, so waiting for it would hold every shutdown for the whole drain period
 * (15 s); ending it cleanly at once lets the client see a normal end and reconnect to another
 * instance (EventSource does so by itself), and frees the backend stream.
 */
export interface OpenStreams {
  /**
   * Registers the function that ends one stream; returns the function that unregisters it
   * (call it when the stream closes). A stream registered while draining is ended at once.
   */
  add(end: () => void): () => void;
  /**
   * `add` without the function it returns (one closure less for each stream open): the caller
   * unregisters with `remove(end)`.
   */
  track(end: () => void): void;
  remove(end: () => void): void;
  /** Ends every open stream, and every stream opened from now on (graceful shutdown). */
  endAll(): void;
  /** Streams open now. */
  readonly size: number;
}

/** The process-wide registry (made once, in gateway.ts). */
export function createOpenStreams(): OpenStreams {
  const open = new Set<() => void>();
  let ending = false;
  const track = (end: () => void): void => {
    // Not from inside the caller's own setup: it has not returned its stream yet.
    if (ending) queueMicrotask(end);
    else open.add(end);
  };
  return {
    add(end) {
      track(end);
      return ending ? () => {} : () => void open.delete(end);
    },
    track,
    remove(end) {
      open.delete(end);
    },
    endAll() {
      ending = true;
      for (const end of [...open]) end();
      open.clear();
    },
    get size() {
      return open.size;
    },
  };
}
