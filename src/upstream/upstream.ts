/**
 * One Upstream per backend origin (`scheme://host:port`): its keep-alive connection pool and its
 * circuit breaker. The registry lives for the whole process, so pools and circuit state survive
 * a configuration reload for origins that still exist (docs/design-decisions.md).
 */
import { rootCertificates } from 'node:tls';
import { Pool } from 'undici';
import type { Origin } from './origin.js';
import { createDisabledBreaker, type CircuitBreaker } from '../circuit/breaker.js';

export interface Upstream {
  readonly origin: Origin;
  /** Pooled keep-alive connections for standard and mapping calls. */
  readonly pool: Pool;
  /**
   * Proxied requests on `pool` right now, and the pool's size: when they are equal, the next
   * request waits in undici's queue, where its headers timeout has not started yet.
   */
  readonly load: { inFlight: number; readonly connections: number };
  readonly breaker: CircuitBreaker;
  /**
   * Unlimited connections for SSE streams, made on first use: long-lived streams must never take
   * the pooled connections standard and mapping calls wait for.
   */
  readonly streamPool: Pool;
  /** TLS options of an https:// origin for connections made outside undici (WebSocket tunnels). */
  readonly tlsConnect: TlsConnectOptions | undefined;
}

export interface TlsConnectOptions {
  readonly ca?: string[];
  readonly rejectUnauthorized: boolean;
}

export interface UpstreamOptions {
  /** Connections per origin: the keep-alive pool of one backend host. */
  readonly connections: number;
  readonly createBreaker?: (origin: string) => CircuitBreaker;
  /** TLS options for https:// origins (extra CA, verification). */
  readonly tls?: { readonly ca?: string; readonly rejectUnauthorized: boolean };
}

export interface UpstreamRegistry {
  forOrigin(origin: Origin): Upstream;
  all(): Iterable<Upstream>;
  close(): Promise<void>;
}

export function createUpstreamRegistry(options: UpstreamOptions): UpstreamRegistry {
  const upstreams = new Map<string, Upstream>();
  const streamPools = new Map<string, Pool>();
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
            ...(origin.protocol === 'https:' && options.tls
              ? {
                  connect: {
                    ...options.tls,
                    ca: options.tls.ca === undefined ? undefined : [...rootCertificates, options.tls.ca],
                  },
                }
              : {}),
          }),
          breaker: createBreaker(origin.key),
          load: { inFlight: 0, connections: options.connections },
          tlsConnect: tlsConnectOptions(origin, options.tls),
          get streamPool() {
            let p = streamPools.get(origin.key);
            if (p === undefined) {
              const connect = this.tlsConnect;
              p = new Pool(`${origin.protocol}//${origin.hostHeader}`, {
                connections: null,
                pipelining: 1,
                keepAliveTimeout: 4_000,
                ...(connect ? { connect: { ...connect } } : {}),
              });
              streamPools.set(origin.key, p);
            }
            return p;
          },
        };
        upstreams.set(origin.key, u);
      }
      return u;
    },
    all: () => upstreams.values(),
    async close() {
      await Promise.all([...upstreams.values()].map((u) => u.pool.close().catch(() => u.pool.destroy())));
      // Streams never end by themselves; their clients are gone by now, so cut what is left.
      await Promise.all([...streamPools.values()].map((p) => p.destroy()));
      upstreams.clear();
      streamPools.clear();
    },
  };
}

function tlsConnectOptions(origin: Origin, tls: UpstreamOptions['tls']): TlsConnectOptions | undefined {
  if (origin.protocol !== 'https:' || tls === undefined) return undefined;
  return {
    rejectUnauthorized: tls.rejectUnauthorized,
    ...(tls.ca === undefined ? {} : { ca: [...rootCertificates, tls.ca] }),
  };
}
