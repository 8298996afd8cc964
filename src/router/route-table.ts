/**
 * Method + path to route, on a radix tree (find-my-way) built once per configuration.
 * Routes come with their path already in find-my-way's syntax (`CompiledRoute.routerPath`).
 */
import FindMyWay from 'find-my-way';
import type { CompiledRoute, Step } from '../pipeline/types.js';
import { HTTP_METHODS, type HttpMethod } from '../config/schema.js';
import { isDotSegmentValue } from '../upstream/target-url.js';

export interface RouteEntry {
  readonly route: CompiledRoute;
  /** The route's pipeline, for every kind of request it gets (WebSocket handshakes too). */
  readonly run: Step;
}

export type Match =
  | { readonly kind: 'found'; readonly entry: RouteEntry; readonly params: Record<string, string> }
  | { readonly kind: 'method-not-allowed'; readonly allow: string }
  /** A route matched, but a parameter's decoded value is a dot-segment (`..`): refused with 400. */
  | { readonly kind: 'bad-parameter'; readonly param: string }
  | { readonly kind: 'not-found' };

export interface RouteTable {
  readonly entries: readonly RouteEntry[];
  match(method: string, path: string): Match;
}

const NOT_FOUND: Match = Object.freeze({ kind: 'not-found' });

/**
 * Builds the table. A GET route also answers HEAD unless a HEAD route is configured for the same
 * path (RFC 9110 9.3.2: HEAD is GET without the body); the backend receives HEAD.
 */
export function createRouteTable(entries: readonly RouteEntry[]): RouteTable {
  const router = FindMyWay({ maxParamLength: 2048, caseSensitive: true, ignoreTrailingSlash: false });
  const explicit = new Set(entries.map((e) => `${e.route.method} ${e.route.routerPath}`));
  for (const entry of entries) {
    const path = entry.route.routerPath;
    router.on(entry.route.method, path, noop, entry);
    if (entry.route.method === 'GET' && !explicit.has(`HEAD ${path}`)) router.on('HEAD', path, noop, entry);
  }
  return {
    entries,
    match(method, path) {
      const found = router.find(method as HttpMethod, path);
      if (found !== null && allPresent(found.params)) {
        const params = found.params as Record<string, string>;
        const bad = dotSegmentParam(params);
        if (bad !== undefined) return { kind: 'bad-parameter', param: bad };
        return { kind: 'found', entry: found.store as RouteEntry, params };
      }
      // Off the hot path: which methods would this path accept?
      const allow: string[] = [];
      for (const m of HTTP_METHODS) {
        const other = router.find(m, path);
        if (other !== null && allPresent(other.params)) allow.push(m);
      }
      return allow.length > 0 && found === null ? { kind: 'method-not-allowed', allow: allow.join(', ') } : NOT_FOUND;
    },
  };
}

/** An empty parameter (`/users/`) matches no route: the backend would get a different path. */
function allPresent(params: Record<string, string | undefined>): boolean {
  for (const k in params) if (params[k] === '') return false;
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

function noop(): void {}
