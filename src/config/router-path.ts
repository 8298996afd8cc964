/**
 * Route templates in the router's syntax. The configuration converts `{param}` itself, once per
 * route, so the router (find-my-way) only ever sees its own syntax.
 */

/** `{param}` becomes find-my-way's `:param`; a literal `:` is escaped as `::`. */
export function toRouterPath(clientPath: string): string {
  return clientPath.replaceAll(':', '::').replace(/\{([^}]+)\}/g, ':$1');
}

/**
 * True for a prefix route (`/static/*`): one `*`, ending the route as a whole segment, which is
 * find-my-way's wildcard as written.
 */
export function isPrefixPattern(route: string): boolean {
  return route.endsWith('/*') && route.indexOf('*') === route.length - 1;
}
