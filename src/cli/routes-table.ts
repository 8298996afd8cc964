import type { CompiledConfig, RouteSpec } from '../config/types.js';
import { formatColumns } from './columns.js';

/** The route table as `portico routes` prints it: one aligned line per route, NOTE when any route has one. */
export function formatRoutes(config: CompiledConfig): string {
  const header = ['METHOD', 'ROUTE', 'BACKEND', 'KIND', 'AUTH', 'NOTE'];
  const rows = config.routes.map((r) => {
    const d = describeRoute(config, r);
    return [d.methods, d.path, d.backend, d.kind, d.auth, d.note];
  });
  const hasNotes = rows.some((row) => row[5] !== '');
  return formatColumns([header, ...rows].map((row) => (hasNotes ? row : row.slice(0, 5))));
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
  if (r.kind === 'mapping' && r.method === 'GET' && !hasHeadRoute(config, r))
    return `HEAD answers the backend's content-length (${r.mapping.length > 0 ? 'unmapped' : 'unfiltered'})`;
  return '';
}

function authMode(config: CompiledConfig): string {
  const a = config.settings.auth;
  return a.introspection ? 'introspection' : a.authService ? 'delegated' : a.jwksUrl ? 'jwks' : 'jwt';
}
