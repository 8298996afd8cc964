/**
 * Closing what a test started, in one call: gateways, backends and sockets alike, in the order
 * given, skipping any that a `before` hook failed to start.
 */

/** Something a test started and must close: a gateway, a backend, a Redis connection. */
export interface Closable {
  close(): unknown;
}

/**
 * Closes each of `things` in turn (the gateway before its backends), skipping those never started.
 * @example after(() => closeAll(gw, backend));
 */
export async function closeAll(...things: (Closable | undefined)[]): Promise<void> {
  for (const thing of things) await thing?.close();
}
