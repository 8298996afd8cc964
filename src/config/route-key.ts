/**
 * What tells a reload that a route, or the rest of the file, did not change (./compile-memo.ts):
 * its validated value as JSON text. Two values with one key compile to the same thing.
 *
 * The reload's worker (./load-worker.ts) sends each route as its key when the key is the route
 * (JSON.parse gives it back whole), which is cheaper to post and read back than the route's
 * structured clone, and is needed anyway. JSON loses a non-finite number (written `null`) and an
 * `undefined`; validated values from YAML have no `undefined`, so a text without `null` is exact, and
 * any other is keyed by a slower stringify that keeps them apart and sent with the route itself.
 */
import type { RouteConfig } from './schema.js';

/** A validated route as a load hands it to compilation: its exact JSON text, or its key and value. */
export type RouteSource = string | { readonly key: string; readonly route: RouteConfig };

/** The source of `route`: its text when that is exact, else its exact key and the route. */
export function routeSource(route: RouteConfig): RouteSource {
  const text = JSON.stringify(route);
  return text.includes('null') ? { key: exactKey(route), route } : text;
}

export function sourceKey(source: RouteSource): string {
  return typeof source === 'string' ? source : source.key;
}

export function sourceRoute(source: RouteSource): RouteConfig {
  return typeof source === 'string' ? (JSON.parse(source) as RouteConfig) : source.route;
}

/** JSON text that tells apart what plain JSON merges: non-finite numbers, `undefined`, `null`. */
export function exactKey(value: unknown): string {
  return JSON.stringify(value, tagInexact);
}

/** A tag no string of the value can be: strings that start with the tag's mark get one more. */
const MARK = '\u0000';

function tagInexact(_key: string, value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : `${MARK}${value}`;
  if (value === undefined) return `${MARK}undefined`;
  if (typeof value === 'string' && value.startsWith(MARK)) return MARK + value;
  return value;
}
