/**
 * Waiting for state that changes without one event to await (a counter, a socket closing, a timer
 * of the gateway's firing): poll the condition until it holds, and fail past a deadline so a test
 * that waits in vain fails instead of hanging.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** How often a condition is polled: short against any deadline a test gives. */
const POLL_MS = 10;

/**
 * Resolves once `condition()` holds (or resolves true); rejects after `timeoutMs` with `what` in the message.
 * @example await waitFor(() => backend.seen.length === 2, 2_000, 'both backend calls');
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
  what = 'condition',
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(POLL_MS);
  }
}
