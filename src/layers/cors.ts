/**
 * CORS (`config.cors`, off unless present), answered by the gateway so that backends need no
 * CORS code (Fetch standard, "CORS protocol").
 *
 * - Preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) on a path some route
 *   serves: 204 from the gateway, never forwarded. An origin not allowed gets the 204 without any
 *   `Access-Control-Allow-*` header, so the browser refuses (as Kong and the `cors` package do).
 * - Actual request from an allowed origin: `Access-Control-Allow-Origin` (and `-Credentials`,
 *   `-Expose-Headers`) are set before the backend answers; `Vary: Origin` keeps caches honest.
 * - `origins: "*"` with `credentials: true` is refused at config load: browsers ignore `*` when
 *   credentials are sent, so that combination would silently not work.
 * - WebSocket handshakes: browsers apply no CORS to them but always send `Origin`, so the
 *   gateway checks it itself (the defence against cross-site WebSocket hijacking): an origin that
 *   is neither allowed nor the gateway's own is refused with 403 (`originCheckLayer`).
 *
 * The policy is compiled once per configuration (src/pipeline/build.ts): the request handler
 * answers preflights with it, and the route pipelines get its layers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CorsConfig } from '../config/schema.js';
import type { Layer } from '../pipeline/types.js';
import { sendError } from '../response/send-error.js';

export interface CorsPolicy {
  /** True when `req` is a preflight request (answered by `preflight`). */
  isPreflight(req: IncomingMessage): boolean;
  /** Answers a preflight with 204. */
  preflight(req: IncomingMessage, res: ServerResponse): void;
  /** Sets the response headers of an actual request (no-op without an allowed `Origin`). */
  decorate(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Whether a WebSocket handshake may proceed: no `Origin` (not a browser), an allowed one, or
   * the gateway's own (`Origin` host equals `Host`, a same-origin page).
   */
  allowsUpgrade(req: IncomingMessage): boolean;
}

function originMatcher(origins: CorsConfig['origins']): (origin: string) => boolean {
  if (origins === '*') return () => true;
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  for (const o of origins) {
    const lower = o.toLowerCase();
    const star = lower.indexOf('://*.');
    if (star < 0) exact.add(lower);
    // `https://*.example.com`: any subdomain depth, never example.com itself.
    else
      patterns.push(
        new RegExp(`^${escape(lower.slice(0, star + 3))}([a-z0-9-]+\\.)+${escape(lower.slice(star + 5))}$`),
      );
  }
  return (origin) => {
    const lower = origin.toLowerCase();
    return exact.has(lower) || patterns.some((p) => p.test(lower));
  };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Compiles `config.cors` once per configuration; undefined when CORS is off. */
export function compileCors(cors: CorsConfig | undefined): CorsPolicy | undefined {
  if (cors === undefined) return undefined;
  const allowed = originMatcher(cors.origins);
  const anyOrigin = cors.origins === '*' && !cors.credentials;
  const methods = cors.methods.join(', ');
  const allowHeaders = cors.headers === '*' ? undefined : cors.headers.join(', ');
  const exposed = cors.exposedHeaders.length > 0 ? cors.exposedHeaders.join(', ') : undefined;
  const maxAge = String(cors.maxAgeSec);

  const allowOrigin = (res: ServerResponse, origin: string) => {
    if (anyOrigin) {
      res.setHeader('access-control-allow-origin', '*');
      return;
    }
    res.setHeader('access-control-allow-origin', origin);
    if (cors.credentials) res.setHeader('access-control-allow-credentials', 'true');
  };

  return {
    isPreflight: (req) =>
      req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined,
    preflight(req, res) {
      const origin = req.headers.origin!;
      res.setHeader('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
      if (allowed(origin)) {
        allowOrigin(res, origin);
        res.setHeader('access-control-allow-methods', methods);
        const requested = req.headers['access-control-request-headers'];
        const headers = allowHeaders ?? requested;
        if (headers !== undefined && headers !== '') res.setHeader('access-control-allow-headers', headers);
        res.setHeader('access-control-max-age', maxAge);
      }
      res.writeHead(204, { 'content-length': 0 });
      res.end();
    },
    decorate(req, res) {
      const origin = req.headers.origin;
      if (origin === undefined) return;
      if (!anyOrigin) res.setHeader('vary', 'Origin');
      if (!allowed(origin)) return;
      allowOrigin(res, origin);
      if (exposed !== undefined) res.setHeader('access-control-expose-headers', exposed);
    },
    allowsUpgrade: (req) => (req.headers.origin !== undefined && allowed(req.headers.origin)) || isSameOrigin(req),
  };
}

/**
 * True for a request with no `Origin` (not sent by a browser) or from the gateway's own origin,
 * judged by `Origin` host = `Host`.
 */
function isSameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  const host = req.headers.host;
  const at = origin.indexOf('://');
  return host !== undefined && at > 0 && origin.slice(at + 3).toLowerCase() === host.toLowerCase();
}

/**
 * The upgrade policy without `config.cors`: only the gateway's own origin (and clients that are
 * not browsers). A WebSocket route whose token may come from a cookie gets it, since the browser
 * sends the cookie with a handshake any page opens (cross-site WebSocket hijacking).
 */
export const SAME_ORIGIN_UPGRADES: Pick<CorsPolicy, 'allowsUpgrade'> = { allowsUpgrade: isSameOrigin };

/** The actual-request half of CORS as a route layer (only on routes of a CORS-enabled config). */
export function corsLayer(policy: CorsPolicy): Layer {
  return (next) => (ex) => {
    policy.decorate(ex.req, ex.res);
    return next(ex);
  };
}

/**
 * The WebSocket half of CORS: 403 for a handshake from a foreign origin. Browsers send no
 * preflight for a WebSocket, so the handshake itself is checked; plain requests pass.
 */
export function originCheckLayer(policy: Pick<CorsPolicy, 'allowsUpgrade'>): Layer {
  return (next) => (ex) => {
    if (ex.upgrade === undefined || policy.allowsUpgrade(ex.req)) return next(ex);
    ex.errorCode = 'GW_ORIGIN_NOT_ALLOWED';
    sendError(ex.res, 'GW_ORIGIN_NOT_ALLOWED');
    return Promise.resolve();
  };
}
