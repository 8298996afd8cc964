import type { CompiledConfig } from '../config/compile.js';

/** The route table as `portico routes` prints it: one aligned line per route. */
export function formatRoutes(config: CompiledConfig): string {
  const rows = [['METHOD', 'ROUTE', 'BACKEND', 'KIND', 'AUTH']];
  for (const r of config.routes) {
    const methods = r.method === 'GET' && !config.routes.some((o) => o.method === 'HEAD' && o.route === r.route) ? 'GET,HEAD' : r.method;
    const auth = r.requiresAuth ? authMode(config) : 'public';
    const kind = r.kind === 'mapping' ? `mapping(${r.mapping.map((m) => m.tag).join(',')})` : r.kind;
    rows.push([methods, r.clientPath, `${r.origin.protocol}//${r.origin.hostHeader}${r.path.source}`, kind, auth]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

function authMode(config: CompiledConfig): string {
  const a = config.settings.auth;
  return a.authService ? 'delegated' : a.jwksUrl ? 'jwks' : 'jwt';
}
