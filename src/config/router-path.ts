/**
 * Route templates in the router's syntax. The configuration converts `{param}` itself, once per
 * route, so the router (find-my-way) only ever sees its own syntax.
 */

/** `{param}` becomes find-my-way's `:param`; a literal `:` is escaped as `::`. */
export function toRouterPath(clientPath: string): string {
  return clientPath.replaceAll(':', '::').replace(/\{([^}]+)\}/g, ':$1');
}
