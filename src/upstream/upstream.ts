/**
 * One Upstream per backend origin (`scheme://host:port`): its keep-alive connection pool and its
 * circuit breaker. The registry lives for the whole process, so pools and circuit state survive
 * a configuration reload for origins that still exist (DECISIONS.md).
 */
import { Pool } from 'undici';
import type { Origin } from './origin.js';
import { createDisabledBreaker, type CircuitBreaker } from '../circuit/breaker.js';

export interface Upstream {
  readonly origin: Origin;
  /** Pooled keep-alive connections for standard and mapping calls. */
  readonly pool: Pool;
  readonly breaker: CircuitBreaker;
}

export interface UpstreamOptions {
  /** Connections per origin (spec 4.3/8: 64 idle connections per host). */
  readonly connections: number;
  readonly createBreaker?: (origin: string) => CircuitBreaker;
}

export interface UpstreamRegistry {
  forOrigin(origin: Origin): Upstream;
  all(): Iterable<Upstream>;
  close(): Promise<void>;
}

export function createUpstreamRegistry(options: UpstreamOptions): UpstreamRegistry {
  const upstreams = new Map<string, Upstream>();
  const createBreaker = options.createBreaker ?? createDisabledBreaker;
  return {
    forOrigin(origin) {
      let u = upstreams.get(origin.key);
      if (u === undefined) {
        u = {
          origin,
          pool: new Pool(`${origin.protocol}//${origin.hostHeader}`, {
            connections: options.connections,
            pipelining: 1,
            // Longer than a typical backend's keep-alive would make us reuse sockets it is closing.
            keepAliveTimeout: 4_000,
            keepAliveMaxTimeout: 600_000,
          }),
          breaker: createBreaker(origin.key),
        };
        upstreams.set(origin.key, u);
      }
      return u;
    },
    all: () => upstreams.values(),
    async close() {
      await Promise.all([...upstreams.values()].map((u) => u.pool.close().catch(() => u.pool.destroy())));
      upstreams.clear();
    },
  };
}
