/**
 * Method + path to route, for one group of routes (all of them, or those of one host), built once
 * per configuration. Precedence (docs/routing.md "Precedence"): an all-literal path first, found
 * by one map look-up per method whatever the number of routes; then the other routes without `*`
 * in the method's segment tree (./segment-tree.ts: a literal segment before a parameter, segment
 * by segment); then prefix routes, the longest first. A route found with a literal path answers
 * with a match made once, when the table is built.
 */
import type { HttpMethod } from '../config/schema.js';
import { HTTP_METHODS } from '../config/schema.js';
import { addToTree, createSegmentTree, finishTree, type SegmentTree } from './segment-tree.js';
import { matchTree } from './tree-match.js';
import type { Match, RouteEntry } from './types.js';

/** The routes of one host group, matched by method and path. */
export interface PathTable {
  /**
   * The match when a route of this table takes the request (or refuses its path); else undefined.
   * `path` is compared, `raw` is where a prefix route's rest is cut from, and `decode` says whether
   * parameter values still hold reserved escapes (./request-path.ts).
   */
  lookup(method: string, path: string, raw: string, decode: boolean): Match | undefined;
  /** Whether a route of this table takes `method` on `path` (for `Allow`, off the hot path). */
  accepts(method: HttpMethod, path: string, raw: string, decode: boolean): boolean;
}

const NO_PARAMS: Record<string, string> = Object.freeze({});

/**
 * Builds the table of `entries`. A GET route also answers HEAD unless a HEAD route is configured
 * for the same path (RFC 9110 9.3.2: HEAD is GET without the body); the backend receives HEAD.
 */
export function createPathTable(entries: readonly RouteEntry[]): PathTable {
  const byMethod = new Map<string, MethodRoutes>();
  const explicit = new Set<string>();
  for (const e of entries) explicit.add(`${e.route.method} ${e.route.clientPath}`);
  const add = (method: string, entry: RouteEntry): void => {
    let routes = byMethod.get(method);
    if (routes === undefined) byMethod.set(method, (routes = { exact: new Map(), tree: undefined }));
    const { clientPath, isPrefix } = entry.route;
    if (!isPrefix && !clientPath.includes('{')) {
      const literal = clientPath.replaceAll('%', '%25');
      if (!routes.exact.has(literal))
        routes.exact.set(literal, Object.freeze({ kind: 'found', entry, params: NO_PARAMS }));
      return;
    }
    addToTree((routes.tree ??= createSegmentTree()), entry, clientPath, isPrefix);
  };
  for (const entry of entries) {
    add(entry.route.method, entry);
    if (entry.route.method === 'GET' && !explicit.has(`HEAD ${entry.route.clientPath}`)) add('HEAD', entry);
  }
  for (const routes of byMethod.values()) if (routes.tree !== undefined) finishTree(routes.tree);
  const lookup = (method: string, path: string, raw: string, decode: boolean): Match | undefined => {
    const routes = byMethod.get(method);
    if (routes === undefined) return undefined;
    const found = routes.exact.get(path);
    if (found !== undefined) return found;
    return routes.tree === undefined ? undefined : matchTree(routes.tree, path, raw, decode);
  };
  return {
    lookup,
    accepts: (method, path, raw, decode) => lookup(method, path, raw, decode) !== undefined,
  };
}

/** The routes of one method in a group: literal paths, and the tree of the others (if any). */
interface MethodRoutes {
  readonly exact: Map<string, Match>;
  tree: SegmentTree | undefined;
}

/** The methods any of `tables` takes on the path, as an `Allow` value; '' for none. */
export function allowedMethods(
  tables: readonly (PathTable | undefined)[],
  path: string,
  raw: string,
  decode: boolean,
): string {
  return HTTP_METHODS.filter((m) => tables.some((t) => t?.accepts(m, path, raw, decode) === true)).join(', ');
}
