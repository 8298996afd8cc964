/**
 * Method + path to route, for one group of routes (all of them, or those of one host):
 * find-my-way radix trees built once per configuration. Precedence (docs/routing.md "Precedence"): a route without `*` (an exact
 * path beats a parameter, segment by segment, as find-my-way ranks them) before any prefix route,
 * then among prefix routes the longest (a literal segment beats a parameter). Exact and parameter
 * routes share one tree and prefix routes have their own, so a prefix never hides a parameter
 * route deeper in the tree; a configuration without prefix routes has no second tree.
 */
import FindMyWay from 'find-my-way';
import type { HttpMethod } from '../config/schema.js';
import { HTTP_METHODS } from '../config/schema.js';
import { isDotSegmentValue } from '../upstream/target-url.js';
import { safeRest } from './prefix-rest.js';
import type { Match, RouteEntry } from './types.js';

/** The routes of one host, matched by method and path. */
export interface PathTable {
  /** The match, with 405 or 404 when no route of this table takes the request. */
  match(method: string, path: string): Match;
  /** The match when a route of this table takes the request (or refuses its path); else undefined. */
  lookup(method: string, path: string): Match | undefined;
  /** Whether a route of this table takes `method` on `path` (for `Allow`, off the hot path). */
  accepts(method: HttpMethod, path: string): boolean;
}

/** A prefix route in its tree: the rest of a path starts after its `slashes`-th `/`. */
interface PrefixStore {
  readonly entry: RouteEntry;
  readonly slashes: number;
}

type Router = ReturnType<typeof FindMyWay>;

const NOT_FOUND: Match = Object.freeze({ kind: 'not-found' });
const BAD_REST: Match = Object.freeze({ kind: 'bad-path' });

/**
 * Builds the table of `entries`. A GET route also answers HEAD unless a HEAD route is configured
 * for the same path (RFC 9110 9.3.2: HEAD is GET without the body); the backend receives HEAD.
 */
export function createPathTable(entries: readonly RouteEntry[]): PathTable {
  const exact = newRouter();
  const prefixes = entries.some((e) => e.route.isPrefix) ? newRouter() : undefined;
  const explicit = new Set(entries.map((e) => `${e.route.method} ${e.route.routerPath}`));
  for (const entry of entries) {
    const path = entry.route.routerPath;
    const router = entry.route.isPrefix ? prefixes! : exact;
    const store: RouteEntry | PrefixStore = entry.route.isPrefix ? { entry, slashes: slashesIn(path) } : entry;
    router.on(entry.route.method, path, noop, store);
    if (entry.route.method === 'GET' && !explicit.has(`HEAD ${path}`)) router.on('HEAD', path, noop, store);
  }
  const accepts = (method: HttpMethod, path: string): boolean => {
    const other = exact.find(method, path);
    if (other !== null && allPresent(other.params)) return true;
    const prefixed = prefixes?.find(method, path);
    return prefixed != null && allPresent(prefixed.params);
  };
  const allowed = (path: string): Match => {
    const allow = HTTP_METHODS.filter((m) => accepts(m, path));
    return allow.length > 0 ? { kind: 'method-not-allowed', allow: allow.join(', ') } : NOT_FOUND;
  };
  if (prefixes === undefined) {
    return {
      match(method, path) {
        const found = exact.find(method as HttpMethod, path);
        if (found !== null && allPresent(found.params)) return exactMatch(found);
        return found === null ? allowed(path) : NOT_FOUND;
      },
      lookup(method, path) {
        const found = exact.find(method as HttpMethod, path);
        return found !== null && allPresent(found.params) ? exactMatch(found) : undefined;
      },
      accepts,
    };
  }
  const lookup = (method: string, path: string): Match | undefined => {
    const found = exact.find(method as HttpMethod, path);
    if (found !== null && allPresent(found.params)) return exactMatch(found);
    const prefixed = prefixes.find(method as HttpMethod, path);
    return prefixed !== null && allPresent(prefixed.params) ? prefixMatch(prefixed, path) : undefined;
  };
  return {
    match(method, path) {
      const m = lookup(method, path);
      if (m !== undefined) return m;
      // Found for this method but with an empty parameter: 404, as on a table without prefixes.
      const empty =
        exact.find(method as HttpMethod, path) !== null || prefixes.find(method as HttpMethod, path) !== null;
      return empty ? NOT_FOUND : allowed(path);
    },
    lookup,
    accepts,
  };
}

function newRouter(): Router {
  return FindMyWay({ maxParamLength: 2048, caseSensitive: true, ignoreTrailingSlash: false });
}

type Found = NonNullable<ReturnType<Router['find']>>;

function exactMatch(found: Found): Match {
  const params = found.params as Record<string, string>;
  const bad = dotSegmentParam(params);
  if (bad !== undefined) return { kind: 'bad-parameter', param: bad };
  return { kind: 'found', entry: found.store as RouteEntry, params };
}

/** The named parameters as for any route, and `*`: the rest of the raw path, made safe. */
function prefixMatch(found: Found, path: string): Match {
  const { entry, slashes } = found.store as PrefixStore;
  const params: Record<string, string> = {};
  for (const k in found.params) {
    if (k === '*') continue;
    const value = found.params[k]!;
    if (isDotSegmentValue(value)) return { kind: 'bad-parameter', param: k };
    params[k] = value;
  }
  // The router hands `*` decoded, where `%2F` reads as `/`: the raw text is cut here instead.
  // Parameters never hold a raw `/`, so the rest starts after the prefix's own slashes.
  let at = -1;
  for (let n = 0; n < slashes; n++) at = path.indexOf('/', at + 1);
  const rest = safeRest(path.slice(at + 1));
  if (rest === undefined) return BAD_REST;
  params['*'] = rest;
  return { kind: 'found', entry, params };
}

/**
 * An empty parameter (`/users/`) matches no route: the backend would get a different path. The
 * rest of a prefix route may be empty (`/static/` is the prefix's own directory).
 */
function allPresent(params: Record<string, string | undefined>): boolean {
  for (const k in params) if (params[k] === '' && k !== '*') return false;
  return true;
}

/**
 * The name of a parameter whose decoded value is a dot-segment. Encoding it is not enough: many
 * backends decode `%2E%2E` before they normalise the path, and would serve the parent resource.
 */
function dotSegmentParam(params: Record<string, string>): string | undefined {
  for (const k in params) if (isDotSegmentValue(params[k]!)) return k;
  return undefined;
}

/** The `/`s before a prefix route's `*`: literal text and parameters, which never hold a `/`. */
function slashesIn(routerPath: string): number {
  let n = 0;
  for (let i = 0; i < routerPath.length - 1; i++) if (routerPath[i] === '/') n++;
  return n;
}

function noop(): void {}
