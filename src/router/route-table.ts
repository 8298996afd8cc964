/**
 * Method + host + path to route, built once per configuration. The host is looked up first: the
 * routes of the request's exact host, then of the `*.domain` covering it, then those without
 * `hosts:`, each group a PathTable (./path-table.ts) found by one map look-up on the host name.
 * A configuration without `hosts:` has one table and never reads the Host (docs/routing.md
 * "Host routing"). The path is read once per request (./request-path.ts), and only when it holds
 * more than plain characters.
 */
import type { Match, RouteEntry } from './types.js';
import { pathTableWork, type PathTable } from './path-table.js';
import { runWhole, type Work } from '../config/sliced-work.js';
import { methodBit, methodIndex, missFor } from './method-set.js';
import { requestHostName } from './host-name.js';
import { needsReading, readRequestPath } from './request-path.js';

export type { Match, RouteEntry };

export interface RouteTable {
  readonly entries: readonly RouteEntry[];
  /** `host` is the request's Host header as sent (`:authority` on HTTP/2); read only with `hosts:`. */
  match(method: string, path: string, host: string | undefined): Match;
}

const HOST_NOT_FOUND: Match = Object.freeze({ kind: 'host-not-found' });
const NOT_FOUND: Match = Object.freeze({ kind: 'not-found' });

/**
 * When `entries` route as `table`'s do (the same methods, client paths and hosts, in the same
 * order), the function that gives `table`'s entries the routes and pipelines of `entries`, so that
 * `table` serves them with no table built; undefined when they route otherwise. Called at the
 * swap: a request reads its entry's route and pipeline in the turn it is matched
 * (server/http-server.ts), so one that started before keeps what it read.
 */
export function retargetTable(table: RouteTable, entries: readonly RouteEntry[]): (() => void) | undefined {
  const held = table.entries;
  if (held.length !== entries.length) return undefined;
  const moves: { readonly slot: RouteEntry; readonly route: RouteEntry['route']; readonly run: RouteEntry['run'] }[] =
    [];
  for (let i = 0; i < held.length; i++) {
    const slot = held[i]!;
    const next = entries[i]!;
    if (next === slot) continue;
    if (!routesAlike(slot.route, next.route)) return undefined;
    moves.push({ slot, route: next.route, run: next.run });
  }
  return () => {
    for (const { slot, route, run } of moves) {
      const writable = slot as { route: RouteEntry['route']; run: RouteEntry['run'] };
      writable.route = route;
      writable.run = run;
    }
  };
}

/** Whether two routes take the same requests: what the table is built from. */
function routesAlike(a: RouteEntry['route'], b: RouteEntry['route']): boolean {
  return (
    a.method === b.method &&
    a.clientPath === b.clientPath &&
    a.isPrefix === b.isPrefix &&
    a.hosts.length === b.hosts.length &&
    a.hosts.every((h, i) => h === b.hosts[i])
  );
}

/** Builds the table. */
export function createRouteTable(entries: readonly RouteEntry[]): RouteTable {
  return runWhole(routeTableWork(entries));
}

/** `createRouteTable` as interruptible work (config/sliced-work.ts), after each route placed. */
export function* routeTableWork(entries: readonly RouteEntry[]): Work<RouteTable> {
  if (!entries.some((e) => e.route.hosts.length > 0)) {
    // The Host is never read.
    const only = yield* pathTableWork(entries);
    return {
      entries,
      match(method, target) {
        const index = methodIndex(method);
        const bit = methodBit(index);
        if (!needsReading(target)) return only.lookup(index, bit, target, target, false) ?? missFor(only.missed);
        const p = readRequestPath(target);
        if (p === undefined) return NOT_FOUND;
        return only.lookup(index, bit, p.path, p.raw, p.decodeParams) ?? missFor(only.missed);
      },
    };
  }
  const { exact, wildcard, fallback } = yield* hostTables(entries);
  const groupsOf = createHostCache((host): HostGroups => {
    const name = requestHostName(host);
    const dot = name.indexOf('.');
    return { own: exact.get(name), covering: dot < 0 ? undefined : wildcard.get(name.slice(dot + 1)) };
  });
  return {
    entries,
    match(method, target, host) {
      const { own, covering } = groupsOf(host);
      if (own === undefined && covering === undefined && fallback === undefined) return HOST_NOT_FOUND;
      let path = target;
      let raw = target;
      let decode = false;
      if (needsReading(target)) {
        const p = readRequestPath(target);
        if (p === undefined) return NOT_FOUND;
        ({ path, raw, decodeParams: decode } = p);
      }
      const index = methodIndex(method);
      const bit = methodBit(index);
      return (
        own?.lookup(index, bit, path, raw, decode) ??
        covering?.lookup(index, bit, path, raw, decode) ??
        fallback?.lookup(index, bit, path, raw, decode) ??
        // Each group that took no route says which methods it has on the path: `Allow` is theirs.
        missFor((own?.missed ?? 0) | (covering?.missed ?? 0) | (fallback?.missed ?? 0))
      );
    },
  };
}

/** The host groups of one Host header (the routes without `hosts:` are the table's, not here). */
interface HostGroups {
  readonly own: PathTable | undefined;
  readonly covering: PathTable | undefined;
}

/** Host headers remembered, most recent first: a gateway sees few distinct ones at a time. */
const HOST_CACHE_SIZE = 8;

/**
 * `groupsOf` remembering its last few answers by the Host header as sent. Comparing a header with
 * a few remembered ones costs less than lower-casing it and hashing the name and its domain, which
 * a map look-up of a new string does on every request.
 */
function createHostCache(groupsOf: (host: string | undefined) => HostGroups): (host: string | undefined) => HostGroups {
  const hosts: (string | undefined)[] = [];
  const groups: HostGroups[] = [];
  let next = 0;
  return (host) => {
    for (let i = 0; i < hosts.length; i++) if (hosts[i] === host) return groups[i]!;
    const found = groupsOf(host);
    hosts[next] = host;
    groups[next] = found;
    next = (next + 1) % HOST_CACHE_SIZE;
    return found;
  };
}

/**
 * The routes of each exact host, of each `*.domain` (keyed by the domain), and those without
 * `hosts:` for every host (undefined when there are none). A request tries its exact host's, then
 * its wildcard's, then the routes without hosts: the first group with a route for it answers.
 */
function* hostTables(entries: readonly RouteEntry[]): Work<{
  exact: Map<string, PathTable>;
  wildcard: Map<string, PathTable>;
  fallback: PathTable | undefined;
}> {
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
    if (pattern.startsWith('*.')) wildcard.set(pattern.slice(2), yield* pathTableWork(list));
    else exact.set(pattern, yield* pathTableWork(list));
  }
  return { exact, wildcard, fallback: everyHost.length > 0 ? yield* pathTableWork(everyHost) : undefined };
}
