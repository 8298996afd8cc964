/**
 * `POST /api/cache/purge` on the admin listener (docs/caching.md "Purge"): a JSON object naming
 * one `url` (absolute, or a path and query for every host), one path `prefix`, or one `route` id,
 * with an optional `host` beside a prefix or a route. Answers `{ "purged": { memory, redis } }`.
 *
 * The only admin path that changes state. Behind the same access as the API, and it takes only
 * `Content-Type: application/json`: a form another site posts to the listener (which, without a
 * token, answers any local caller) cannot send that without a CORS preflight, which the listener
 * never grants.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PurgeResult, PurgeTarget } from '../cache/purge.js';
import { sendError } from '../response/send-error.js';

/** A purge request is a few hundred bytes. */
const MAX_BODY_BYTES = 4096;

/** Drops what a request names from the cache. */
export type CachePurger = (target: PurgeTarget) => Promise<PurgeResult>;

/** Reads the request, purges, answers. */
export async function servePurge(req: IncomingMessage, res: ServerResponse, purge: CachePurger): Promise<void> {
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
    req.resume();
    return sendError(res, 'GW_REQUEST_NOT_JSON');
  }
  const body = await readBody(req);
  if (body === undefined) return sendError(res, 'GW_BODY_TOO_LARGE', { connection: 'close' });
  const target = purgeTarget(body);
  if (target === undefined) return sendError(res, 'GW_ADMIN_PURGE_INVALID');
  const purged = await purge(target);
  const text = Buffer.from(JSON.stringify({ purged }));
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': text.length,
    'cache-control': 'no-store',
  });
  res.end(text);
}

/** The target a body names; undefined when it is not exactly one of url, prefix, route (with an optional host). */
export function purgeTarget(body: string): PurgeTarget | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const fields = value as Record<string, unknown>;
  const names = Object.keys(fields);
  const kinds = names.filter((n) => n === 'url' || n === 'prefix' || n === 'route');
  if (kinds.length !== 1 || names.some((n) => !['url', 'prefix', 'route', 'host'].includes(n))) return undefined;
  const given = fields[kinds[0]!];
  const host = fields.host;
  if (typeof given !== 'string' || given === '' || (host !== undefined && typeof host !== 'string')) return undefined;
  const hostKey = host === undefined ? undefined : normalHost(host);
  if (kinds[0] === 'route') return { kind: 'route', host: hostKey, routeId: given };
  if (kinds[0] === 'prefix') return given.startsWith('/') ? { kind: 'prefix', host: hostKey, path: given } : undefined;
  if (host !== undefined) return undefined;
  if (given.startsWith('/')) return { kind: 'url', host: undefined, path: given };
  // Taken apart by hand, not by URL: the stored key is the target as the client sent it, never normalised.
  const absolute = /^https?:\/\/([^/?#]+)([^#]*)/i.exec(given);
  if (absolute === null) return undefined;
  const path = absolute[2]!;
  return { kind: 'url', host: normalHost(absolute[1]!), path: path.startsWith('/') ? path : `/${path}` };
}

/** A Host as the cache keys it: lower case, without a trailing dot. */
function normalHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

/** The request's body as text, or undefined past MAX_BODY_BYTES. */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        resolve(undefined);
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(undefined));
  });
}
