/** Route templates as the router reads them (src/router/segment-tree.ts). */

/**
 * True for a prefix route (`/static/*`): one `*`, ending the route as a whole segment; the route
 * owns every path below its prefix.
 */
export function isPrefixPattern(route: string): boolean {
  return route.endsWith('/*') && route.indexOf('*') === route.length - 1;
}
