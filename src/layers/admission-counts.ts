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
  /** The count of one route (by `admissionKey`), made when first asked for. */
  route(key: string): AdmissionCount;
  /** The route counts made so far, by key. */
  routes(): ReadonlyMap<string, AdmissionCount>;
}

/**
 * What a route's count is kept under: its id (`GET /users/{id}`), and its hosts when it has any,
 * since routes on different hosts may share an id. Stable across reloads that keep the route.
 */
export function admissionKey(route: { readonly id: string; readonly hosts: readonly string[] }): string {
  return route.hosts.length === 0 ? route.id : `${route.id} ${route.hosts.join(' ')}`;
}

/** Creates the process's admission counts, all at zero. */
export function createAdmissionCounts(): AdmissionCounts {
  const gateway: AdmissionCount = { inFlight: 0, refused: 0 };
  const byRoute = new Map<string, AdmissionCount>();
  return {
    gateway,
    route(key) {
      let count = byRoute.get(key);
      if (count === undefined) byRoute.set(key, (count = { inFlight: 0, refused: 0 }));
      return count;
    },
    routes: () => byRoute,
  };
}
