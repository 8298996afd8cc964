/**
 * Two routes that the router could not tell apart: the same method, pattern (whatever their
 * parameters are called) and host, or a pattern the router itself rejects next to the others.
 * Routes on different hosts never conflict, and a route limited to a host may share its method
 * and pattern with one that serves every host: it takes that host's requests (docs/routing.md).
 */
import FindMyWay from 'find-my-way';
import { HTTP_METHODS, type HttpMethod } from './schema.js';
import type { AddProblem } from './problems.js';
import { toRouterPath } from './router-path.js';

/** `FILE:LINE:COL` of a key path, so that a conflict names both places. */
export type LocateKey = (path: readonly (string | number)[]) => string;

export interface RouteConflicts {
  /**
   * Adds route `index`; `params` is undefined when its pattern failed the route rules. `hosts`
   * are the route's host patterns, already normalised; empty for a route that serves every host.
   */
  add(
    index: number,
    method: HttpMethod,
    route: string,
    params: readonly string[] | undefined,
    hosts: readonly string[],
  ): void;
}

/** A conflict check for the routes of one file, all under `prefix`. */
export function createRouteConflicts(prefix: string, at: AddProblem, locate: LocateKey): RouteConflicts {
  const seen = new Map<string, number>();
  // One router per host, as the gateway builds them: the router has its own conflict rules.
  const routers = new Map<string, ReturnType<typeof FindMyWay>>();
  return {
    add(index, method, route, params, hosts) {
      const path = ['routes', index, 'route'];
      const pattern = route.replace(/\{[^}]*\}/g, '{}');
      for (const host of hosts.length === 0 ? [''] : hosts) {
        const key = `${method} ${pattern} ${host}`;
        const first = seen.get(key);
        if (first !== undefined) {
          const on = host === '' ? '' : ` on host ${host}`;
          at(
            path,
            `routes[${index}]: ${method} ${route}${on} is already defined by routes[${first}] (${locate(['routes', first, 'route'])})`,
          );
          return;
        }
        seen.set(key, index);
      }
      if (params === undefined) return;
      for (const host of hosts.length === 0 ? [''] : hosts) {
        let router = routers.get(host);
        if (router === undefined) routers.set(host, (router = FindMyWay({ maxParamLength: 2048 })));
        try {
          router.on(method, toRouterPath(prefix + route), () => {});
        } catch (err) {
          at(path, `routes[${index}].route: the router rejects "${route}": ${(err as Error).message}`);
          return;
        }
      }
    },
  };
}

/** Whether `method` is one the schema accepts. */
export function isHttpMethod(method: string | undefined): method is HttpMethod {
  return (HTTP_METHODS as readonly (string | undefined)[]).includes(method);
}
