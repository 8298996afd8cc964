/**
 * What `check` tells about a valid file: weak settings, and keys of tainha-gateway files read
 * under Portico's names. Notices never stop the gateway.
 */
import type { GatewayFile } from './schema.js';
import type { Problem } from './problems.js';
import type { ConfigPath, ParsedConfig } from './parse.js';
import { tainhaNotes } from './tainha.js';

/** An HS256 key should be at least as long as the hash (RFC 7518 section 3.2). */
export const MIN_SECRET_BYTES = 32;

/** The warnings and notes of a valid file, by position. */
export function configNotices(config: GatewayFile, parsed: ParsedConfig): Problem[] {
  const out: Problem[] = [];
  const note = (path: ConfigPath, severity: 'warning' | 'note', message: string, hint?: string) =>
    out.push({ file: parsed.file, ...parsed.locate(path), severity, message, ...(hint ? { hint } : {}) });
  if (config.routes.length === 0)
    note(
      ['routes'],
      'warning',
      'routes: the list is empty; every request will get 404 GW_ROUTE_NOT_FOUND',
      'add a route, or run portico init for a commented example',
    );
  const { auth } = config.config;
  // The secret is only used when neither an auth service nor a JWKS endpoint is set.
  if (auth.secret !== undefined && auth.authService === undefined && auth.jwksUrl === undefined) {
    const bytes = Buffer.byteLength(auth.secret);
    if (bytes < MIN_SECRET_BYTES) {
      note(
        ['config', 'auth', 'secret'],
        'warning',
        `config.auth.secret is shorter than ${MIN_SECRET_BYTES} bytes (${bytes}); tokens signed with it are easier to forge`,
        'use 32 random bytes or more, e.g. openssl rand -base64 32',
      );
    }
  }
  tainhaNotes(config.config, (path, message) => note(path, 'note', message));
  return out.sort((a, b) => a.line - b.line || a.col - b.col);
}
