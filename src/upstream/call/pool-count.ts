/**
 * What a call records on the pool it went out on: its end (the in-flight count that balancing and
 * the status page read) and its outcome (a named upstream's passive health). Leaf of the call
 * core, so that anything that sends a call can record it without importing the registry.
 */
import type { BackendPool } from '../types.js';

/** The one place a call's end is recorded on its pool, once per `callStarted`. */
export function callEnded(pool: BackendPool): void {
  pool.inFlight--;
}

/**
 * Records on a named upstream's target whether the call failed (no answer, or a 5xx): its passive
 * health (upstream/targets.ts). Nothing to do for a plain service's pool.
 */
export function callOutcome(pool: BackendPool, failed: boolean): void {
  pool.health?.record(failed);
}
