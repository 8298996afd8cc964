/**
 * One Upstream per backend origin (`scheme://host:port`): its keep-alive connection pool and its
 * circuit breaker. The registry lives for the whole process, so pools and circuit state survive
 * a configuration reload for origins that still exist (docs/design-decisions.md).
 */
import { rootCertificates } from 'node:tls';
import { Pool } from 'undici';
import type { Origin } from './origin.js';
import { createDisabledBreaker, type CircuitBreaker } from '../circuit/breaker.js';

/**
 * A pool of connections to a backend, and the calls on it right now. Every call the gateway makes
 * on it counts itself (upstream/backend-call.ts), whichever endpoint makes it: the count is how a
 * call knows it will wait in undici's queue, and what a choice between pools would compare.
 */
export interface BackendPool {
  readonly dispatcher: Pool;
  /** Calls dispatched on `dispatcher` that have not ended: proxied, streamed, enrichment and mapping calls. */
  inFlight: number;
  /** The most connections `dispatcher` opens (Infinity when unlimited). */
  readonly connections: number;
}

export interface Upstream {
  readonly origin: Origin;
  readonly breaker: CircuitBreaker;
  /**
   * The pool a standard, enrichment, mapping or auth call goes out on, asked for per call so the
   * choice can depend on the moment. An upstream has one pool (bounded keep-alive connections).
   */
  pick(): BackendPool;
  /**
   * The pool an SSE stream goes out on: unlimited connections, made on first use. Long-lived
   * streams must never take the pooled connections standard and mapping calls wait for.
   */
  pickForStream(): BackendPool;
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
  const pools: BackendPool[] = [];
  const streamPools: BackendPool[] = [];
  const createBreaker = options.createBreaker ?? createDisabledBreaker;
  return {
    forOrigin(origin) {
      let u = upstreams.get(origin.key);
      if (u === undefined) {
        const tlsConnect = tlsConnectOptions(origin, options.tls);
        const pool: BackendPool = {
          dispatcher: new Pool(`${origin.protocol}//${origin.hostHeader}`, {
            connections: options.connections,
            pipelining: 1,
            // Longer than a typical backend's keep-alive would make us reuse sockets it is closing.
            keepAliveTimeout: 4_000,
            keepAliveMaxTimeout: 600_000,
            ...(tlsConnect ? { connect: { ...tlsConnect } } : {}),
          }),
          inFlight: 0,
          connections: options.connections,
        };
        pools.push(pool);
        let streamPool: BackendPool | undefined;
        u = {
          origin,
          breaker: createBreaker(origin.key),
          tlsConnect,
          pick: () => pool,
          pickForStream() {
            if (streamPool === undefined) {
              streamPool = {
                dispatcher: new Pool(`${origin.protocol}//${origin.hostHeader}`, {
                  connections: null,
                  pipelining: 1,
                  keepAliveTimeout: 4_000,
                  ...(tlsConnect ? { connect: { ...tlsConnect } } : {}),
                }),
                inFlight: 0,
                connections: Infinity,
              };
              streamPools.push(streamPool);
            }
            return streamPool;
          },
        };
        upstreams.set(origin.key, u);
      }
      return u;
    },
    all: () => upstreams.values(),
    async close() {
      await Promise.all(pools.map((p) => p.dispatcher.close().catch(() => p.dispatcher.destroy())));
      // Streams never end by themselves; their clients are gone by now, so cut what is left.
      await Promise.all(streamPools.map((p) => p.dispatcher.destroy()));
      upstreams.clear();
      pools.length = 0;
      streamPools.length = 0;
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
