import type { CompiledConfig, RouteSpec } from '../config/types.js';
import { formatColumns } from './columns.js';

/**
 * The route table as `portico routes` prints it: one aligned line per route in the order the
 * router tries them (exact, then parameter, then prefix routes, the longest prefix first); HOSTS
 * when any route names its hosts, PLUGINS when any route runs plugins (`config.plugins` first,
 * then the route's own), NOTE when any route has one.
 */
export function formatRoutes(config: CompiledConfig): string {
  const hasHosts = config.routes.some((r) => r.hosts.length > 0);
  const hasPlugins = config.routes.some((r) => r.plugins.length > 0);
  const header = [
    'METHOD',
    ...(hasHosts ? ['HOSTS'] : []),
    'ROUTE',
    'BACKEND',
    'KIND',
    'AUTH',
    ...(hasPlugins ? ['PLUGINS'] : []),
    'NOTE',
  ];
  const rows = byPrecedence(config.routes).map((r) => {
    const d = describeRoute(config, r);
    return [
      d.methods,
      ...(hasHosts ? [r.hosts.join(',') || '*'] : []),
      d.path,
      d.backend,
      d.kind,
      d.auth,
      ...(hasPlugins ? [r.plugins.join(',') || '-'] : []),
      d.note,
    ];
  });
  const hasNotes = rows.some((row) => row.at(-1) !== '');
  return formatColumns([header, ...rows].map((row) => (hasNotes ? row : row.slice(0, -1))));
}

/**
 * Routes in the router's order of precedence (router/segment-tree.ts): exact paths, then paths
 * with parameters, then prefix routes, longest first; the file's order within each.
 */
function byPrecedence(routes: readonly RouteSpec[]): RouteSpec[] {
  const rank = (r: RouteSpec) => (r.isPrefix ? 2 : r.route.includes('{') ? 1 : 0);
  return routes
    .map((r, i) => ({ r, i }))
    .sort((a, b) => {
      const byRank = rank(a.r) - rank(b.r);
      if (byRank !== 0) return byRank;
      const byLength = a.r.isPrefix ? b.r.route.length - a.r.route.length : 0;
      return byLength !== 0 ? byLength : a.i - b.i;
    })
    .map(({ r }) => r);
}

/** One route as `portico routes` and the status page (docs/dashboard.md) describe it. */
export function describeRoute(
  config: CompiledConfig,
  r: RouteSpec,
): { methods: string; path: string; backend: string; kind: string; auth: string; note: string } {
  return {
    methods: methods(config, r),
    path: r.clientPath,
    backend: backend(r),
    kind: kindOf(r),
    auth: r.requiresAuth ? authMode(config) : 'public',
    note: note(config, r),
  };
}

/** The route's kind; a JSON answer read by the gateway says how: `aggregate(n)`, `mapping(tags)`, `filtered`. */
function kindOf(r: RouteSpec): string {
  if (r.kind !== 'mapping' && r.kind !== 'aggregate') return r.kind;
  const parts = r.kind === 'aggregate' ? [`aggregate(${r.backends.length})`] : [];
  if (r.mapping.length > 0) parts.push(`mapping(${r.mapping.map((m) => m.tag).join(',')})`);
  if (r.fields !== undefined) parts.push('filtered');
  return parts.join('+');
}

/** A WebSocket route answers upgrades only; a GET route also answers HEAD unless a HEAD route exists. */
function methods(config: CompiledConfig, r: RouteSpec): string {
  if (r.kind === 'websocket') return 'WS';
  return r.method === 'GET' && !hasHeadRoute(config, r) ? 'GET,HEAD' : r.method;
}

function hasHeadRoute(config: CompiledConfig, r: RouteSpec): boolean {
  return config.routes.some((o) => o.method === 'HEAD' && o.route === r.route);
}

/** The URL the gateway calls (a named upstream's targets in brackets); a WebSocket route's backend is reached with ws:// or wss://. */
function backend(r: RouteSpec): string {
  // A split: each arm as written with its weight (`split(a=90,canary=10)/path`).
  if (r.split !== undefined)
    return `split(${r.split.arms.map((a) => `${a.name}=${a.weight}`).join(',')})${r.path.source}`;
  if (r.kind === 'aggregate')
    return r.backends.map((b) => `${b.origin.protocol}//${b.origin.hostHeader}${b.path.source}`).join(' + ');
  const named = r.origin.upstream;
  if (named !== undefined)
    return `${named.name}(${named.targets.map((t) => t.origin.hostHeader).join('|')})${r.path.source}`;
  const scheme = r.kind === 'websocket' ? (r.origin.protocol === 'https:' ? 'wss:' : 'ws:') : r.origin.protocol;
  return `${scheme}//${r.origin.hostHeader}${r.path.source}`;
}

/** HEAD on a mapped route is forwarded as it is: its content-length is the backend's, not the mapped body's. */
function note(config: CompiledConfig, r: RouteSpec): string {
  const notes: string[] = [];
  if (r.kind === 'mapping' && r.method === 'GET' && !hasHeadRoute(config, r))
    notes.push(`HEAD answers the backend's content-length (${r.mapping.length > 0 ? 'unmapped' : 'unfiltered'})`);
  if (r.mirror !== undefined) notes.push(`mirror ${r.mirror.percent}% to ${r.mirror.service}`);
  return notes.join('; ');
}

function authMode(config: CompiledConfig): string {
  const a = config.settings.auth;
  return a.introspection ? 'introspection' : a.authService ? 'delegated' : a.jwksUrl ? 'jwks' : 'jwt';
}
