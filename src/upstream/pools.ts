/**
 * The connection pools of every upstream, made here and closed together at shutdown: a bounded
 * keep-alive pool per origin (or per target of a named upstream) for standard, mapping and auth
 * calls, an unbounded one for streams and an HTTP/2 one for gRPC calls, both made on first use.
 * A pool whose TLS settings a reload replaced is retired: its calls finish, then it closes.
 */
import { Pool } from 'undici';
import type { ClientTls, Origin } from '../config/types.js';
import type { TargetHealth } from './targets.js';
import type { BackendPool, PoolUse } from './types.js';
import { skipInformationalConnector } from './skip-informational.js';
import { tlsConnectOptions } from './tls-connect.js';

/**
 * Streams a gRPC connection carries at once before the pool opens another (a Node server
 * announces 100 by default; grpc-js and grpc-go servers announce more or none).
 */
const GRPC_STREAMS_PER_CONNECTION = 100;

export interface PoolOptions {
  readonly use?: PoolUse;
  /** Offer h2 by ALPN to an https:// origin (a named upstream's `http2`). */
  readonly http2?: boolean;
  /** A named upstream's target, whose calls record their outcome on it. */
  readonly health?: TargetHealth;
  /** The TLS of an https:// origin's connections (CAs, verification, client certificate). */
  readonly tls?: ClientTls | undefined;
}

export class PoolMaker {
  private readonly pools = new Set<BackendPool>();
  private readonly streamPools = new Set<BackendPool>();
  /** Retired pools still finishing their calls: shutdown cuts them like the streams. */
  private readonly retiring = new Set<BackendPool>();
  /** Pools retired while `holdRetired` holds them, closed at its release. */
  private held: BackendPool[] | undefined;

  constructor(private readonly connections: number) {}

  /**
   * A pool to `origin` for `use`.
   *
   * A gRPC pool speaks HTTP/2 only: h2c by prior knowledge to http://, ALPN h2 to https://. It is
   * undici's HTTP/2 client, which streams a request body while the answer streams back and hands
   * the answer's trailers to the call (`onComplete`); two settings make it multiplex: each call
   * says it is idempotent (undici otherwise sends a POST only on an idle HTTP/2 connection, one
   * call per connection), and `pipelining` is the number of streams one connection carries.
   */
  make(origin: Origin, { use = 'pooled', http2 = false, health, tls }: PoolOptions = {}): BackendPool {
    const tlsConnect = tlsConnectOptions(origin, tls);
    const bounded = use === 'pooled';
    const grpc = use === 'grpc';
    const h2 = http2 || grpc;
    const h2c = grpc && origin.protocol === 'http:';
    const pool: BackendPool = {
      dispatcher: new Pool(`${origin.protocol}//${origin.hostname}:${origin.port}`, {
        connections: bounded ? this.connections : null,
        pipelining: grpc ? GRPC_STREAMS_PER_CONNECTION : 1,
        // Longer than a typical backend's keep-alive would make us reuse sockets it is closing.
        keepAliveTimeout: 4_000,
        ...(bounded ? { keepAliveMaxTimeout: 600_000 } : {}),
        ...(h2 ? { allowH2: true } : {}),
        // A backend's 1xx before its answer is skipped, never a 502 (./skip-informational.ts).
        connect: skipInformationalConnector({
          ...tlsConnect,
          ...(h2 ? { allowH2: true } : {}),
          ...(h2c ? { useH2c: true } : {}),
        }),
      }),
      inFlight: 0,
      connections: bounded ? this.connections : Infinity,
      origin,
      ...(health === undefined ? {} : { health }),
    };
    (bounded ? this.pools : this.streamPools).add(pool);
    return pool;
  }

  /**
   * Closes a pool no call will be given again: calls in flight (and open streams) finish on their
   * connections, idle keep-alive connections close at once, and no new connection is made.
   */
  retire(pool: BackendPool): void {
    if (!this.pools.delete(pool) && !this.streamPools.delete(pool)) return;
    this.retiring.add(pool);
    if (this.held !== undefined) this.held.push(pool);
    else this.close1(pool);
  }

  /**
   * Until the function returned is called, retired pools stay open: a reload built in slices
   * (docs/performance.md "Scale in routes") replaces a service's pools while the running
   * configuration, which still calls them, serves requests; they close once it is swapped out.
   */
  holdRetired(): () => void {
    const held: BackendPool[] = (this.held ??= []);
    return () => {
      if (this.held === held) this.held = undefined;
      for (const pool of held.splice(0)) this.close1(pool);
    };
  }

  private close1(pool: BackendPool): void {
    void pool.dispatcher
      .close()
      .catch(() => pool.dispatcher.destroy())
      .finally(() => this.retiring.delete(pool));
  }

  /** Lets the pooled calls finish, then closes; streams never end by themselves, so they are cut. */
  async close(): Promise<void> {
    await Promise.all([...this.pools].map((p) => p.dispatcher.close().catch(() => p.dispatcher.destroy())));
    // Their clients are gone by now: cut what is left.
    await Promise.all([...this.streamPools, ...this.retiring].map((p) => p.dispatcher.destroy()));
    this.pools.clear();
    this.streamPools.clear();
    this.retiring.clear();
  }
}
