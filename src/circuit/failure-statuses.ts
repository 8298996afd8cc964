/**
 * What a backend's answer is to its circuit (docs/circuit-breaker.md): with no list, a 5xx is a
 * failure and any other answer a success; with a `failureStatuses` list, the statuses it names
 * are failures, any other 5xx counts neither way (it says nothing of the backend's health that
 * the operator wants counted, so it must not reset a run of failures either), and any answer
 * below 500 is a success.
 */

/** The permit method a backend's answer settles with. */
export type StatusOutcome = 'succeed' | 'fail' | 'release';

/** How an answer with `status` settles its permit, under `failureStatuses` (undefined: every 5xx). */
export function statusOutcome(status: number, failureStatuses: readonly number[] | undefined): StatusOutcome {
  if (status < 500) return 'succeed';
  if (failureStatuses === undefined || failureStatuses.includes(status)) return 'fail';
  return 'release';
}
