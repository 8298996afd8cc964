/**
 * The admin listener (`config.admin`, docs/dashboard.md): a node:http server of its own, on
 * `admin.host` (127.0.0.1 by default) and `admin.port`, never on the public port. It serves the
 * status page, its JSON API and its live feed, and takes one command, the cache purge:
 *
 *   GET  /                    the page (the login form while a token is needed)
 *   GET  /assets/dashboard.*  the page's script and style (no token: they hold no data)
 *   POST /login, /logout      the session cookie (access.ts)
 *   GET  /api/status          the status document (types.ts StatusDocument)
 *   GET  /api/series          the last five minutes, second by second
 *   GET  /api/feed            Server-Sent Events (feed.ts)
 *   POST /api/cache/purge     drops answers from the HTTP cache (cache-purge.ts)
 *   GET  /metrics             Prometheus text, also for a bearer of telemetry.metricsToken
 *
 * Its host and port apply at start; a reload applies a changed token (docs/dashboard.md).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AdminConfig } from '../config/schema.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { sendError } from '../response/send-error.js';
import { pathOf } from '../server/http-server.js';
import { hostRefusal } from '../server/protocol-checks.js';
import { createAdminAccess, SIGN_OUT_COOKIE, type AdminAccess } from './access.js';
import { createFeed, type Feed } from './feed.js';
import { servePurge, type CachePurger } from './cache-purge.js';
import { createLiveStats, type LiveStats } from './live-stats.js';
import { loadPageFiles, sendPageFile, type PageFile } from './page.js';
import { createStatusReader, type StatusSources } from './status.js';
import type { AdminMetrics, StatusDocument } from './types.js';

/** The biggest login form read: a token field and little else. */
const MAX_FORM_BYTES = 4096;

/** Sent with every answer: the page loads nothing from elsewhere, and no other site may frame it. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/** The methods each path answers. */
const PATHS: Record<string, readonly string[]> = {
  '/': ['GET', 'HEAD'],
  '/assets/dashboard.css': ['GET', 'HEAD'],
  '/assets/dashboard.js': ['GET', 'HEAD'],
  '/login': ['POST'],
  '/logout': ['POST'],
  '/api/status': ['GET', 'HEAD'],
  '/api/series': ['GET', 'HEAD'],
  '/api/feed': ['GET'],
  '/api/cache/purge': ['POST'],
  '/metrics': ['GET', 'HEAD'],
};

export interface AdminOptions {
  readonly settings: AdminConfig;
  readonly events: EventBus;
  readonly logger: Logger;
  readonly sources: StatusSources;
  /** Wall-clock milliseconds (tests). */
  readonly now?: () => number;
  /** Milliseconds between two feed events (tests). */
  readonly feedIntervalMs?: number;
  /** GET /metrics; without it the path is not found. */
  readonly metrics?: AdminMetrics;
  /** POST /api/cache/purge; without it the path is not found. */
  readonly purge?: CachePurger;
}

export interface Admin {
  /** Listens on the configured host and port. */
  listen(): Promise<AddressInfo>;
  /** The listening address; undefined before `listen`. */
  address(): AddressInfo | undefined;
  /** A reloaded `config.admin`: the token applies now, host and port at the next start. */
  configure(next: AdminConfig | undefined): void;
  close(): Promise<void>;
}

/** What answering a request reads: made once by `createAdmin`, the same for every request. */
interface AdminSite {
  readonly files: ReadonlyMap<string, PageFile>;
  readonly status: () => StatusDocument;
  readonly live: LiveStats;
  readonly feed: Feed;
  readonly metrics: AdminMetrics | undefined;
  readonly purge: CachePurger | undefined;
}

/** Creates the listener and starts counting; nothing is served until `listen`. */
export function createAdmin(options: AdminOptions): Admin {
  const { settings, logger } = options;
  const now = options.now ?? Date.now;
  const live = createLiveStats(options.events, now);
  live.start();
  const status = createStatusReader(live, options.sources, now);
  const feed = createFeed(
    { status, series: () => live.series(), point: () => live.lastPoint() },
    options.feedIntervalMs,
  );
  const site: AdminSite = {
    files: loadPageFiles(),
    status,
    live,
    feed,
    metrics: options.metrics,
    purge: options.purge,
  };
  let token = settings.token;
  let access = createAdminAccess(token, now);

  // A missing Host is refused by `serve` in the gateway's JSON shape, not by Node's bare 400.
  const server: Server = createServer({ requireHostHeader: false }, (req, res) => {
    try {
      serve(site, req, res, access);
    } catch (err) {
      logger.error({ err, path: pathOf(req.url ?? '/') }, 'admin listener failed to answer');
      sendError(res, 'GW_INTERNAL');
    }
  });

  return {
    async listen() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(settings.port, settings.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      logger.info(
        { address: address.address, port: address.port, token: access.hasToken },
        `admin listening on http://${host}:${address.port}`,
      );
      return address;
    },
    address: () => (server.address() as AddressInfo | null) ?? undefined,
    configure(next) {
      // A new token signs every session out: their cookies were made with the old one.
      if (next === undefined || next.token === token) return;
      token = next.token;
      access = createAdminAccess(token, now);
    },
    async close() {
      live.stop();
      feed.closeAll();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      if (server.listening) await closed;
    },
  };
}

/** Answers one request: the paths of PATHS, behind the host check and, for data, the token. */
function serve(site: AdminSite, req: IncomingMessage, res: ServerResponse, gate: AdminAccess): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  // One valid Host first, as on the public port: with two, the allow-list would read only the first.
  if (hostRefusal(req) !== undefined) {
    req.resume();
    return sendError(res, 'GW_BAD_HOST', { connection: 'close' });
  }
  if (!gate.hostAllowed(req)) return sendError(res, 'GW_ADMIN_HOST_NOT_ALLOWED');
  const path = pathOf(req.url ?? '/');
  const method = req.method ?? 'GET';
  const allowed = PATHS[path];
  if (allowed === undefined) return sendError(res, 'GW_ROUTE_NOT_FOUND');
  if (!allowed.includes(method)) return sendError(res, 'GW_METHOD_NOT_ALLOWED', { allow: allowed.join(', ') });
  if (path.startsWith('/assets/')) return sendPageFile(req, res, file(site, path.slice('/assets/'.length)));
  if (path === '/login') return void login(site, req, res, gate);
  if (path === '/logout') {
    res.writeHead(303, { location: '/', 'set-cookie': SIGN_OUT_COOKIE, 'content-length': 0 });
    return void res.end();
  }
  const allowedIn = gate.allows(req);
  if (path === '/metrics') {
    if (site.metrics === undefined) return sendError(res, 'GW_ROUTE_NOT_FOUND');
    // A scraper may hold the metrics token alone: it opens this path, not the status page's data.
    if (allowedIn || site.metrics.bearsToken(req)) return site.metrics.serve(req, res);
  }
  if (path === '/')
    return allowedIn
      ? sendPageFile(req, res, file(site, gate.hasToken ? 'index-token.html' : 'index.html'))
      : sendPageFile(req, res, file(site, 'login.html'), 401);
  if (!allowedIn)
    return sendError(res, 'GW_ADMIN_UNAUTHORIZED', { 'www-authenticate': 'Bearer realm="portico-admin"' });
  if (path === '/api/status') return sendJson(res, site.status());
  if (path === '/api/series') return sendJson(res, site.live.series());
  if (path === '/api/cache/purge') {
    if (site.purge === undefined) return sendError(res, 'GW_ROUTE_NOT_FOUND');
    return void servePurge(req, res, site.purge).catch(() => sendError(res, 'GW_INTERNAL'));
  }
  return site.feed.add(res);
}

/** `POST /login`: the session cookie for the right token, the form again for a wrong one. */
async function login(site: AdminSite, req: IncomingMessage, res: ServerResponse, gate: AdminAccess): Promise<void> {
  if (!gate.hasToken) {
    res.writeHead(303, { location: '/', 'content-length': 0 });
    return void res.end();
  }
  const form = await readForm(req);
  if (form === undefined) return sendError(res, 'GW_BODY_TOO_LARGE', { connection: 'close' });
  const cookie = gate.login(form.get('token') ?? '');
  if (cookie === undefined) return sendPageFile(req, res, file(site, 'login-failed.html'), 401);
  res.writeHead(303, { location: '/', 'set-cookie': cookie, 'content-length': 0 });
  res.end();
}

function file(site: AdminSite, name: string): PageFile {
  return site.files.get(name)!;
}

/** Answers 200 with `body` as JSON, never cached. */
function sendJson(res: ServerResponse, body: unknown): void {
  const text = Buffer.from(JSON.stringify(body));
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': text.length,
    'cache-control': 'no-store',
  });
  res.end(text);
}

/**
 * What a reload of `config.admin` cannot change while running, in one line for the log; undefined
 * when nothing waits for a restart. `running` is the block the gateway started with.
 */
export function adminReloadWarning(
  running: AdminConfig | undefined,
  next: AdminConfig | undefined,
): string | undefined {
  if (running === undefined && next !== undefined)
    return 'config.admin added: the admin listener starts at the next start';
  if (running !== undefined && next === undefined)
    return 'config.admin removed: it applies at the next start; the admin listener keeps running';
  if (running !== undefined && next !== undefined && (running.port !== next.port || running.host !== next.host))
    return `config.admin host or port changed: it applies at the next start; the admin listener stays on ${running.host}:${running.port}`;
  return undefined;
}

/** The urlencoded form of a request, or undefined when it is too large. */
function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_FORM_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        resolve(undefined);
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', () => resolve(undefined));
  });
}
