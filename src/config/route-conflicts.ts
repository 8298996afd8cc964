/**
 * Two routes that the router could not tell apart: the same method and pattern (whatever
 * their parameters are called), or a pattern the router itself rejects next to the others.
 */
import FindMyWay from 'find-my-way';
import { HTTP_METHODS, type HttpMethod } from './schema.js';
import type { AddProblem } from './problems.js';
import { toRouterPath } from './router-path.js';

export interface RouteConflicts {
  /** Adds route `index`; `params` is undefined when its pattern failed the route rules. */
  add(index: number, method: HttpMethod, route: string, params: readonly string[] | undefined): void;
}

/** A conflict check for the routes of one file, all under `prefix`. */
export function createRouteConflicts(prefix: string, at: AddProblem): RouteConflicts {
  const seen = new Map<string, number>();
  const router = FindMyWay({ maxParamLength: 2048 });
  return {
    add(index, method, route, params) {
      const path = ['routes', index, 'route'];
      const key = `${method} ${route.replace(/\{[^}]*\}/g, '{}')}`;
      const first = seen.get(key);
      if (first !== undefined) {
        at(path, `routes[${index}]: ${method} ${route} is already defined by routes[${first}]`);
        return;
      }
      seen.set(key, index);
      if (params === undefined) return;
      // The router has its own conflict rules: ask it now, so `check` catches what `start` would.
      try {
        router.on(method, toRouterPath(prefix + route), () => {});
      } catch (err) {
        at(path, `routes[${index}].route: the router rejects "${route}": ${(err as Error).message}`);
      }
    },
  };
}

/** Whether `method` is one the schema accepts. */
export function isHttpMethod(method: string | undefined): method is HttpMethod {
  return (HTTP_METHODS as readonly (string | undefined)[]).includes(method);
}
