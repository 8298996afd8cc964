/**
 * Purging the HTTP cache (docs/caching.md "Purge"): one URL, every URL under a path prefix, or
 * every answer a route stored, from the process's memory and from the shared level in Redis.
 * What to drop is named as the admin API takes it (admin/cache-purge.ts reads the request);
 * matching is on the stored keys, the Host and the target URI as clients sent them.
 */
import type { SharedCacheStore, SharedPurge } from './redis-store.js';
import type { CacheStore } from './store.js';

/** What a purge drops: exactly one of `url`, `prefix`, `route`; `host` narrows a prefix or a route. */
export type PurgeTarget =
  | { readonly kind: 'url'; readonly host: string | undefined; readonly path: string }
  | { readonly kind: 'prefix'; readonly host: string | undefined; readonly path: string }
  | { readonly kind: 'route'; readonly host: string | undefined; readonly routeId: string };

/** Answers dropped from memory, and from Redis (`null`: Redis did not answer; absent: no shared level). */
export interface PurgeResult {
  readonly memory: number;
  readonly redis?: number | null;
}

/** The shared level as a purge uses it: the store, and the broadcast to the other replicas' memory (cache/broadcast.ts). */
export interface PurgeLevel {
  readonly store: SharedCacheStore;
  readonly broadcast?: { purged(target: PurgeTarget): void } | undefined;
}

/** Drops `target` from both levels, then tells the other replicas to drop it from their memory. */
export async function purgeCache(
  store: CacheStore,
  shared: PurgeLevel | undefined,
  target: PurgeTarget,
): Promise<PurgeResult> {
  const memory = store.purge((primary, routeId) => matches(target, primary, routeId));
  if (shared === undefined) return { memory };
  const redis = await shared.store.purge(sharedPurge(target));
  // After Redis: a replica that drops its copy and looks in Redis must not find the old one there.
  shared.broadcast?.purged(target);
  return { memory, redis: redis ?? null };
}

/** Whether the stored answers of `primary` (stored by route `routeId`) are what `target` names. */
export function matches(target: PurgeTarget, primary: string, routeId: string | undefined): boolean {
  const cut = primary.indexOf('\u0000');
  if (target.host !== undefined && primary.slice(0, cut) !== target.host) return false;
  const path = primary.slice(cut + 1);
  if (target.kind === 'url') return path === target.path;
  if (target.kind === 'prefix') return path.startsWith(target.path);
  return routeId === target.routeId;
}

function sharedPurge(target: PurgeTarget): SharedPurge {
  if (target.kind === 'route') return { host: target.host, path: undefined, exact: false, routeId: target.routeId };
  return { host: target.host, path: target.path, exact: target.kind === 'url', routeId: undefined };
}
