/**
 * Method + host + path to route, built once per configuration. Each host's routes are a
 * PathTable (./path-table.ts); which one a request uses is a map look-up on its host name. A
 * configuration without `hosts:` has one table and never reads the Host (docs/routing.md
 * "Host routing"). Routes come with their path already in find-my-way's syntax
 * (`CompiledRoute.routerPath`).
 */
import type { Match, RouteEntry } from './types.js';
import { createPathTable, type PathTable } from './path-table.js';
import { requestHostName } from './host-name.js';

export type { Match, RouteEntry };

export interface RouteTable {
  readonly entries: readonly RouteEntry[];
  /** `host` is the request's Host header as sent (`:authority` on HTTP/2); read only with `hosts:`. */
  match(method: string, path: string, host: string | undefined): Match;
}

const HOST_NOT_FOUND: Match = Object.freeze({ kind: 'host-not-found' });

/** Builds the table. */
export function createRouteTable(entries: readonly RouteEntry[]): RouteTable {
  if (!entries.some((e) => e.route.hosts.length > 0)) {
    // The Host is never read: the one table's own function is the table's.
    return { entries, match: createPathTable(entries).match };
  }
  const { exact, wildcard, fallback } = hostTables(entries);
  return {
    entries,
    match(method, path, host) {
      const name = requestHostName(host);
      let table = exact.get(name);
      if (table === undefined) {
        const dot = name.indexOf('.');
        table = (dot < 0 ? undefined : wildcard.get(name.slice(dot + 1))) ?? fallback;
      }
      return table === undefined ? HOST_NOT_FOUND : table.match(method, path);
    },
  };
}

/**
 * One table per exact host (its routes, then those of the `*.parent` that covers it, then those
 * without `hosts:`), one per wildcard keyed by its parent domain (its routes, then those without
 * `hosts:`), and the table of the routes without `hosts:` for every other host, undefined when
 * there are none. An exact name beats a wildcard as TLS certificates rank them.
 */
function hostTables(entries: readonly RouteEntry[]): {
  exact: Map<string, PathTable>;
  wildcard: Map<string, PathTable>;
  fallback: PathTable | undefined;
} {
  const everyHost = entries.filter((e) => e.route.hosts.length === 0);
  const on = (pattern: string) => entries.filter((e) => e.route.hosts.includes(pattern));
  const patterns = new Set(entries.flatMap((e) => e.route.hosts));
  const exact = new Map<string, PathTable>();
  const wildcard = new Map<string, PathTable>();
  for (const pattern of patterns) {
    if (pattern.startsWith('*.')) {
      wildcard.set(pattern.slice(2), createPathTable([...on(pattern), ...everyHost]));
      continue;
    }
    const dot = pattern.indexOf('.');
    const covering = dot < 0 ? [] : on(`*${pattern.slice(dot)}`);
    exact.set(pattern, createPathTable([...on(pattern), ...covering, ...everyHost]));
  }
  return { exact, wildcard, fallback: everyHost.length > 0 ? createPathTable(everyHost) : undefined };
}
