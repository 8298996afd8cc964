/**
 * Invalidation of the HTTP cache by unsafe requests (RFC 9111 4.4, docs/caching.md
 * "Invalidation"): on every route whose method may change what the cache holds, whether or not
 * the route caches, the stored answers of the request's URI go once it succeeded, from memory and
 * from the shared level, and the other replicas are told to drop them from theirs (cache/broadcast.ts).
 */
import type { CacheStore } from '../cache/store.js';
import type { SharedCacheStore } from '../cache/redis-store.js';
import type { CacheBroadcast } from '../cache/broadcast.js';
import { primaryKey } from '../cache/keys.js';
import { text } from '../cache/storable.js';
import type { Layer } from '../pipeline/types.js';

/** Methods that never change what the cache holds (RFC 9110 9.2.1). */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** What an unsafe request to a URI does to the cache (RFC 9111 4.4): its entries go once it succeeded. */
export function invalidationLayer(
  store: CacheStore,
  shared: SharedCacheStore | undefined,
  broadcast: CacheBroadcast | undefined,
): Layer {
  const forget = (primary: string) => {
    store.delete(primary);
    shared?.delete(primary);
  };
  return (next) => (ex) => {
    const { req, res } = ex;
    res.once('finish', () => {
      if (res.statusCode >= 400) return;
      const primary = primaryKey(req);
      forget(primary);
      const dropped = broadcast === undefined ? undefined : [primary];
      const host = primary.slice(0, primary.indexOf('\u0000'));
      for (const name of ['location', 'content-location']) {
        const target = sameHostPath(host, text(res.getHeader(name) as string | string[] | undefined));
        if (target === undefined) continue;
        forget(`${host}\u0000${target}`);
        dropped?.push(`${host}\u0000${target}`);
      }
      // One message for all of them, sent after the deletions on the same connection: a replica
      // that drops its copy and then looks in Redis finds none there.
      if (broadcast !== undefined && dropped !== undefined) broadcast.invalidated(dropped);
    });
    return next(ex);
  };
}

/** A Location / Content-Location on the request's own host, as a path (RFC 9111 4.4: same origin only). */
function sameHostPath(host: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    const url = new URL(value, `http://${host || 'localhost'}`);
    return url.host.toLowerCase() === host ? url.pathname + url.search : undefined;
  } catch {
    return undefined;
  }
}
