/**
 * The connection pools of every upstream, made here and closed together at shutdown: a bounded
 * keep-alive pool per origin (or per target of a named upstream) for standard, mapping and auth
 * calls, and an unbounded one for streams, made on first use.
 */
import { Pool } from 'undici';
import type { Origin } from '../config/types.js';
import type { TargetHealth } from './targets.js';
import type { BackendPool } from './types.js';
import { skipInformationalConnector } from './skip-informational.js';

/** TLS options of the connections to an origin (undefined for http://). */
type TlsFor = (origin: Origin) => object | undefined;

export class PoolMaker {
  private readonly pools: BackendPool[] = [];
  private readonly streamPools: BackendPool[] = [];

  constructor(
    private readonly connections: number,
    private readonly tlsFor: TlsFor,
  ) {}

  /** A pool to `origin`; `health`: a named upstream's target, whose calls record their outcome on it. */
  make(
    origin: Origin,
    { streaming = false, http2 = false, health }: { streaming?: boolean; http2?: boolean; health?: TargetHealth } = {},
  ): BackendPool {
    const tlsConnect = this.tlsFor(origin);
    const pool: BackendPool = {
      dispatcher: new Pool(`${origin.protocol}//${origin.hostname}:${origin.port}`, {
        connections: streaming ? null : this.connections,
        pipelining: 1,
        // Longer than a typical backend's keep-alive would make us reuse sockets it is closing.
        keepAliveTimeout: 4_000,
        ...(streaming ? {} : { keepAliveMaxTimeout: 600_000 }),
        ...(http2 ? { allowH2: true } : {}),
        // A backend's 1xx before its answer is skipped, never a 502 (./skip-informational.ts).
        connect: skipInformationalConnector({ ...tlsConnect, ...(http2 ? { allowH2: true } : {}) }),
      }),
      inFlight: 0,
      connections: streaming ? Infinity : this.connections,
      origin,
      ...(health === undefined ? {} : { health }),
    };
    (streaming ? this.streamPools : this.pools).push(pool);
    return pool;
  }

  /** Lets the pooled calls finish, then closes; streams never end by themselves, so they are cut. */
  async close(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.dispatcher.close().catch(() => p.dispatcher.destroy())));
    // Their clients are gone by now: cut what is left.
    await Promise.all(this.streamPools.map((p) => p.dispatcher.destroy()));
    this.pools.length = 0;
    this.streamPools.length = 0;
  }
}
