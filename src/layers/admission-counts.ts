/**
 * What admission control counts (./admission.ts): the requests in flight and the refusals, for the
 * whole gateway and per route. Made once per process (setup/registries.ts) and kept across
 * reloads: a request admitted under the old configuration holds its slot until it is answered,
 * and the new limits apply, from the swap on, to every request that arrives.
 */

/** The requests in flight under one limit, and how many it refused since the process started. */
export interface AdmissionCount {
  inFlight: number;
  refused: number;
}

export interface AdmissionCounts {
  /** Every request of every route with admission control, under `config.admission.maxInFlight`. */
  readonly gateway: AdmissionCount;
  /** The count of one route (by route id, `GET /users/{id}`), made when first asked for. */
  route(routeId: string): AdmissionCount;
  /** The route counts made so far, by route id. */
  routes(): ReadonlyMap<string, AdmissionCount>;
}

/** Creates the process's admission counts, all at zero. */
export function createAdmissionCounts(): AdmissionCounts {
  const gateway: AdmissionCount = { inFlight: 0, refused: 0 };
  const byRoute = new Map<string, AdmissionCount>();
  return {
    gateway,
    route(routeId) {
      let count = byRoute.get(routeId);
      if (count === undefined) byRoute.set(routeId, (count = { inFlight: 0, refused: 0 }));
      return count;
    },
    routes: () => byRoute,
  };
}
