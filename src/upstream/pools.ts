/**
 * The connection pools of every upstream, made here and closed together at shutdown: a bounded
 * keep-alive pool per origin (or per target of a named upstream) for standard, mapping and auth
 * calls, an unbounded one for streams and an HTTP/2 one for gRPC calls, both made on first use.
 */
import { Pool } from 'undici';
import type { Origin } from '../config/types.js';
import type { TargetHealth } from './targets.js';
import type { BackendPool, PoolUse } from './types.js';
import { skipInformationalConnector } from './skip-informational.js';

/** TLS options of the connections to an origin (undefined for http://). */
type TlsFor = (origin: Origin) => object | undefined;

/**
 * Streams a gRPC connection carries at once before the pool opens another (a Node server
 * announces 100 by default; grpc-js and grpc-go servers announce more or none).
 */
const GRPC_STREAMS_PER_CONNECTION = 100;

export class PoolMaker {
  private readonly pools: BackendPool[] = [];
  private readonly streamPools: BackendPool[] = [];

  constructor(
    private readonly connections: number,
    private readonly tlsFor: TlsFor,
  ) {}

  /**
   * A pool to `origin` for `use`; `http2`: offer h2 by ALPN to an https:// origin (a named
   * upstream's `http2`); `health`: a named upstream's target, whose calls record their outcome on it.
   *
   * A gRPC pool speaks HTTP/2 only: h2c by prior knowledge to http://, ALPN h2 to https://. It is
   * undici's HTTP/2 client, which streams a request body while the answer streams back and hands
   * the answer's trailers to the call (`onComplete`); two settings make it multiplex: each call
   * says it is idempotent (undici otherwise sends a POST only on an idle HTTP/2 connection, one
   * call per connection), and `pipelining` is the number of streams one connection carries.
   */
  make(
    origin: Origin,
    { use = 'pooled', http2 = false, health }: { use?: PoolUse; http2?: boolean; health?: TargetHealth } = {},
  ): BackendPool {
    const tlsConnect = this.tlsFor(origin);
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
    (bounded ? this.pools : this.streamPools).push(pool);
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
