/**
 * Two routes that the router could not tell apart: the same method, pattern (whatever their
 * parameters are called) and host. The router places a route by its pattern with the parameter
 * names blanked (src/router/segment-tree.ts), so any other two patterns are two routes; its
 * precedence decides between them. Routes on different hosts never conflict, and a route limited
 * to a host may share its method and pattern with one that serves every host: it takes that
 * host's requests (docs/routing.md). One map look-up per route and host: a file of 10,000 routes
 * is checked in linear time.
 */
import { HTTP_METHODS, type HttpMethod } from './schema.js';
import type { AddProblem } from './problems.js';

/** `FILE:LINE:COL` of a key path, so that a conflict names both places. */
export type LocateKey = (path: readonly (string | number)[]) => string;

export interface RouteConflicts {
  /**
   * Adds route `index`. `hosts` are the route's host patterns, already normalised; empty for a
   * route that serves every host.
   */
  add(index: number, method: HttpMethod, route: string, hosts: readonly string[]): void;
}

/** A conflict check for the routes of one file. */
export function createRouteConflicts(at: AddProblem, locate: LocateKey): RouteConflicts {
  const seen = new Map<string, number>();
  return {
    add(index, method, route, hosts) {
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
    },
  };
}

/** Whether `method` is one the schema accepts. */
export function isHttpMethod(method: string | undefined): method is HttpMethod {
  return (HTTP_METHODS as readonly (string | undefined)[]).includes(method);
}
