/**
 * JWKS key sources, made once per process (stateful parts live in registries made at
 * startup, so caches survive a reload). A reload that keeps `jwksUrl` (and
 * `jwksCooldownSec`) gets the same source back: no refetch, and keys loaded before keep
 * verifying while the endpoint is down (stale-if-error), exactly as without the reload.
 * The authenticator built on a source is still per configuration (issuer, audience, tolerance).
 */
import type { Dispatcher } from 'undici';
import type { Logger } from '../observability/logger.js';
import { createRemoteKeySource, type JwksKeySource, type RemoteKeySourceOptions } from './jwks.js';

/** URLs kept after they leave the configuration; the oldest goes first (a source holds no timers). */
export const JWKS_REGISTRY_MAX_SOURCES = 16;

export interface JwksRegistry {
  /** The key source of `url` with these cooldown settings; fetched once, then shared across reloads. */
  keySource(options: {
    readonly url: string;
    readonly cooldownSec: number;
    readonly pool?: Dispatcher | undefined;
  }): JwksKeySource;
  readonly size: number;
}

export interface JwksRegistryOptions {
  readonly logger: Logger;
  /** Default 1 s (jwks.ts). */
  readonly retryAfterFailureMs?: number;
  /** Milliseconds clock for the retry backoff; default `Date.now`. */
  readonly now?: () => number;
  /** Makes a source; tests count or fake it. Default: a jose remote key set, prefetched at once. */
  readonly createSource?: (options: RemoteKeySourceOptions) => JwksKeySource;
}

/** The per-process registry of JWKS key sources, keyed by URL and cooldown. */
export function createJwksRegistry(options: JwksRegistryOptions): JwksRegistry {
  const sources = new Map<string, JwksKeySource>();
  /** The pool each source fetches through: a reload that changed the origin's TLS hands a new one. */
  const pools = new Map<string, Dispatcher | undefined>();
  const create = options.createSource ?? createRemoteKeySource;
  return {
    keySource({ url, cooldownSec, pool }) {
      const key = `${cooldownSec} ${url}`;
      const existing = sources.get(key);
      // The old pool drains and closes: a source still fetching through it would fail.
      if (existing !== undefined && pools.get(key) === pool) {
        // Most recently used last, so the eviction below drops URLs no configuration uses any more.
        sources.delete(key);
        sources.set(key, existing);
        return existing;
      }
      const source = create({
        url,
        cooldownSec,
        logger: options.logger,
        pool,
        ...(options.retryAfterFailureMs === undefined ? {} : { retryAfterFailureMs: options.retryAfterFailureMs }),
        ...(options.now === undefined ? {} : { now: options.now }),
      });
      sources.delete(key);
      sources.set(key, source);
      pools.set(key, pool);
      if (sources.size > JWKS_REGISTRY_MAX_SOURCES) {
        const oldest = sources.keys().next().value!;
        sources.delete(oldest);
        pools.delete(oldest);
      }
      return source;
    },
    get size() {
      return sources.size;
    },
  };
}
