/** What more than one source module uses: the route label and the latency buckets. */

/** Seconds; dense at the low end, where a gateway's own latency lives. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The route label of a request that matched no route. */
export const UNMATCHED = 'unmatched';

/** The route template of a route id (`GET /users/{id}` -> `/users/{id}`). */
export function routeLabel(routeId: string | undefined): string {
  if (routeId === undefined) return UNMATCHED;
  const space = routeId.indexOf(' ');
  return space < 0 ? routeId : routeId.slice(space + 1);
}
