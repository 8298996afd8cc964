/**
 * Long-lived responses the gateway ends itself when it starts draining. An open SSE stream never
 * finishes on its own, so waiting for it would hold every shutdown for the whole drain period
 * (15 s); ending it cleanly at once lets the client see a normal end and reconnect to another
 * instance (EventSource does so by itself), and frees the backend stream.
 */
/**
 * A stream the drain ends: the function that ends it, or an object whose `endStream` does (an
 * open tunnel registers its own state object: no closure for each of thousands of tunnels).
 */
export type EndsStream = (() => void) | { endStream(): void };

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
  track(end: EndsStream): void;
  remove(end: EndsStream): void;
  /** Ends every open stream, and every stream opened from now on (graceful shutdown). */
  endAll(): void;
  /** Streams open now. */
  readonly size: number;
}

/** The process-wide registry (made once, in gateway.ts). */
export function createOpenStreams(): OpenStreams {
  const open = new Set<EndsStream>();
  let ending = false;
  const track = (end: EndsStream): void => {
    // Not from inside the caller's own setup: it has not returned its stream yet.
    if (ending) queueMicrotask(() => endOne(end));
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
      for (const end of [...open]) endOne(end);
      open.clear();
    },
    get size() {
      return open.size;
    },
  };
}

function endOne(end: EndsStream): void {
  if (typeof end === 'function') end();
  else end.endStream();
}
