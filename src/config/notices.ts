/**
 * What `check` tells about a valid file: weak settings, and keys of tainha-gateway files read
 * under Portico's names. Notices never stop the gateway.
 */
import zlib from 'node:zlib';
import type { GatewayFile } from './schema.js';
import type { Problem } from './problems.js';
import type { ConfigPath, ParsedConfig } from './parse.js';
import { tainhaNotes } from './tainha.js';

/** An HS256 key should be at least as long as the hash (RFC 7518 section 3.2). */
export const MIN_SECRET_BYTES = 32;

/** The warnings and notes of a valid file, by position. */
export function configNotices(config: GatewayFile, parsed: ParsedConfig): Problem[] {
  const out: Problem[] = [];
  const note: Note = (path, severity, message, hint) =>
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
  spillNotices(config, note);
  compressionNotices(config, note);
  return out.sort((a, b) => a.line - b.line || a.col - b.col);
}

/** zstd listed as the only coding on a Node version without it (before 22.15): nothing is compressed. */
function compressionNotices(config: GatewayFile, note: Note): void {
  const { algorithms } = config.config.compression;
  if ('createZstdCompress' in zlib || algorithms.some((a) => a !== 'zstd')) return;
  note(
    ['config', 'compression', 'algorithms'],
    'warning',
    `compression.algorithms: this Node version (${process.version}) has no zstd, and no other coding is listed; answers are sent uncompressed`,
    'add br or gzip after zstd: they are used where zstd is missing',
  );
}

type Note = (path: ConfigPath, severity: 'warning' | 'note', message: string, hint?: string) => void;

/**
 * A body limit above a spill cap: a buffered body larger than the cap is refused (429 or 503)
 * however idle the gateway, so the body limit does not say what the route takes. Streamed and
 * validated bodies never spill (docs/operations.md "Request buffering").
 */
function spillNotices(config: GatewayFile, note: Note): void {
  const { limits } = config.config;
  const cap = Math.min(limits.spillMaxBytes, limits.spillMaxBytesPerClient);
  const caps = `limits.spillMaxBytesPerClient ${limits.spillMaxBytesPerClient}, limits.spillMaxBytes ${limits.spillMaxBytes}`;
  const warn = (path: ConfigPath, label: string, bytes: number) =>
    note(
      path,
      'warning',
      `${label}: ${bytes} is above the spill caps (${caps}): a buffered body larger than the smaller cap is always refused`,
      'raise the caps, or set requestBuffering: false on the routes that take such bodies',
    );
  let usesDefault = false;
  config.routes.forEach((r, i) => {
    if (!r.requestBuffering || r.isSSE || r.isWebSocket || r.request !== undefined) return;
    if (r.maxBodyBytes === undefined) usesDefault = true;
    else if (r.maxBodyBytes > cap) warn(['routes', i, 'maxBodyBytes'], `routes[${i}].maxBodyBytes`, r.maxBodyBytes);
  });
  if (usesDefault && limits.maxBodyBytes > cap)
    warn(['config', 'limits', 'maxBodyBytes'], 'config.limits.maxBodyBytes', limits.maxBodyBytes);
}
