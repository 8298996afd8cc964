/**
 * Method + host + path to route, built once per configuration. The routes of each host pattern
 * are a PathTable (./path-table.ts), and so are the routes without `hosts:`; a request tries its
 * exact host's, then its `*.domain`'s, then those without hosts, each found by a map look-up on
 * its host name. A configuration without `hosts:` has one table and never reads the Host
 * (docs/routing.md "Host routing"). Routes come with their path already in find-my-way's syntax
 * (`CompiledRoute.routerPath`).
 */
import type { Match, RouteEntry } from './types.js';
import { createPathTable, type PathTable } from './path-table.js';
import { requestHostName } from './host-name.js';
import { HTTP_METHODS } from '../config/schema.js';

export type { Match, RouteEntry };

export interface RouteTable {
  readonly entries: readonly RouteEntry[];
  /** `host` is the request's Host header as sent (`:authority` on HTTP/2); read only with `hosts:`. */
  match(method: string, path: string, host: string | undefined): Match;
}

const HOST_NOT_FOUND: Match = Object.freeze({ kind: 'host-not-found' });
const NOT_FOUND: Match = Object.freeze({ kind: 'not-found' });

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
      const own = exact.get(name);
      const dot = name.indexOf('.');
      const covering = dot < 0 ? undefined : wildcard.get(name.slice(dot + 1));
      if (own === undefined && covering === undefined)
        return fallback === undefined ? HOST_NOT_FOUND : fallback.match(method, path);
      return (
        own?.lookup(method, path) ??
        covering?.lookup(method, path) ??
        fallback?.lookup(method, path) ??
        allowedIn([own, covering, fallback], path)
      );
    },
  };
}

/**
 * The routes of each exact host, of each `*.domain` (keyed by the domain), and those without
 * `hosts:` for every host (undefined when there are none). A request tries its exact host's, then
 * its wildcard's, then the routes without hosts: the first group with a route for it answers.
 */
function hostTables(entries: readonly RouteEntry[]): {
  exact: Map<string, PathTable>;
  wildcard: Map<string, PathTable>;
  fallback: PathTable | undefined;
} {
  const everyHost = entries.filter((e) => e.route.hosts.length === 0);
  const byPattern = new Map<string, RouteEntry[]>();
  for (const e of entries)
    for (const pattern of e.route.hosts) {
      const list = byPattern.get(pattern);
      if (list === undefined) byPattern.set(pattern, [e]);
      else list.push(e);
    }
  const exact = new Map<string, PathTable>();
  const wildcard = new Map<string, PathTable>();
  for (const [pattern, list] of byPattern) {
    if (pattern.startsWith('*.')) wildcard.set(pattern.slice(2), createPathTable(list));
    else exact.set(pattern, createPathTable(list));
  }
  return { exact, wildcard, fallback: everyHost.length > 0 ? createPathTable(everyHost) : undefined };
}

/** Off the hot path: 405 with the methods any of the host's groups takes on `path`, else 404. */
function allowedIn(tables: readonly (PathTable | undefined)[], path: string): Match {
  const allow = HTTP_METHODS.filter((m) => tables.some((t) => t?.accepts(m, path) === true));
  return allow.length > 0 ? { kind: 'method-not-allowed', allow: allow.join(', ') } : NOT_FOUND;
}
