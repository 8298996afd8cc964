/**
 * One Upstream per backend origin (`scheme://host:port`): its keep-alive connection pool and its
 * circuit breaker; a named upstream (`upstreams:`) has one pool per target and picks one per call
 * (targets.ts). The registry lives for the whole process, so pools, circuit state and target
 * health survive a configuration reload for origins and targets that still exist
 * (docs/design-decisions.md).
 */
import type { ClientTls, Origin, UpstreamSpec } from '../config/types.js';
import { TargetSet, type Target } from './targets.js';
import { DnsTargets, type LookupAll } from './dns-targets.js';
import type { Logger } from '../observability/logger.js';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { BackendPool, Upstream } from './types.js';
import { PoolMaker } from './pools.js';
import { tlsConnectOptions } from './tls-connect.js';
import type { EventBus } from '../observability/events.js';
import { createDisabledBreaker } from '../circuit/breaker.js';
import { type CircuitBreaker } from '../circuit/types.js';

export interface UpstreamOptions {
  /** Connections per origin: the keep-alive pool of one backend host (of each target of a named upstream). */
  readonly connections: number;
  /** Where target ejections are reported ('upstream:target'). */
  readonly events?: EventBus;
  /** Milliseconds clock for ejection times (tests move it by hand). */
  readonly now?: () => number;
  /** Resolves host name targets of named upstreams (default: node:dns lookup, every address). */
  readonly lookup?: LookupAll;
  /** Where DNS look-up failures are logged. */
  readonly logger?: Logger;
  readonly createBreaker?: (origin: string) => CircuitBreaker;
  /** TLS of https:// services that are not named upstreams (`config.upstreamTls`); `useTls` replaces it. */
  readonly tls?: ClientTls | undefined;
}

export interface UpstreamRegistry {
  forOrigin(origin: Origin): Upstream;
  /**
   * The TLS of https:// services from now on (a reload's `config.upstreamTls`): a service whose
   * TLS changed gets a new Upstream with new pools at its next `forOrigin`, and its old pools drain.
   */
  useTls(tls: ClientTls | undefined): void;
  /**
   * Until the function returned is called, the pools `forOrigin` and target changes retire stay
   * open, for the configuration still served while a reload builds in slices (PoolMaker.holdRetired).
   */
  holdRetired(): () => void;
  all(): Iterable<Upstream>;
  /**
   * The pool copies for a route's mirror go out on (docs/routing.md "Mirroring"): one per origin,
   * apart from the origin's own pools so that a slow mirror never takes a connection a route's
   * real calls wait for; unbounded (each route bounds its copies in flight), cut at shutdown.
   */
  mirrorPool(origin: Origin): BackendPool;
  /** Every target of every named upstream, for metrics and `portico routes`. */
  targets(): Iterable<{ readonly upstream: string; readonly target: Target }>;
  close(): Promise<void>;
}

export function createUpstreamRegistry(options: UpstreamOptions): UpstreamRegistry {
  return new Registry(options);
}

/** The registry: one Upstream per origin key, the target sets and DNS followers of named upstreams. */
class Registry implements UpstreamRegistry {
  private readonly upstreams = new Map<string, Upstream>();
  private readonly mirrors = new Map<string, BackendPool>();
  private readonly sets = new Map<string, TargetSet>();
  private readonly resolvers = new Map<string, DnsTargets>();
  /** A plain service's TLS identity and how to retire its pools, by origin key. */
  private readonly services = new Map<string, { readonly tlsId: string | undefined; retire(): void }>();
  private readonly pools: PoolMaker;
  private readonly createBreaker: (origin: string) => CircuitBreaker;
  private tls: ClientTls | undefined;

  constructor(private readonly options: UpstreamOptions) {
    this.pools = new PoolMaker(options.connections);
    this.createBreaker = options.createBreaker ?? createDisabledBreaker;
    this.tls = options.tls;
  }

  forOrigin(origin: Origin): Upstream {
    let u = this.upstreams.get(origin.key);
    // A named upstream's origin is new after a reload: its targets may have changed. A service
    // keeps its Upstream while its TLS stays the same.
    if (u !== undefined && (origin.upstream === undefined ? this.keepsTls(origin) : u.origin === origin)) return u;
    if (origin.upstream === undefined) this.services.get(origin.key)?.retire();
    u = origin.upstream === undefined ? this.single(origin) : this.balanced(origin, origin.upstream);
    this.upstreams.set(origin.key, u);
    return u;
  }

  useTls(tls: ClientTls | undefined): void {
    this.tls = tls;
  }

  holdRetired(): () => void {
    return this.pools.holdRetired();
  }

  private keepsTls(origin: Origin): boolean {
    return origin.protocol !== 'https:' || this.services.get(origin.key)?.tlsId === this.tls?.id;
  }

  all(): Iterable<Upstream> {
    return this.upstreams.values();
  }

  mirrorPool(origin: Origin): BackendPool {
    let pool = this.mirrors.get(origin.key);
    if (pool === undefined) {
      pool = this.pools.make(origin, { use: 'stream' });
      this.mirrors.set(origin.key, pool);
    }
    return pool;
  }

  *targets(): Iterable<{ readonly upstream: string; readonly target: Target }> {
    for (const [upstream, set] of this.sets) for (const target of set.targets) yield { upstream, target };
  }

  async close(): Promise<void> {
    await this.pools.close();
    this.upstreams.clear();
    this.mirrors.clear();
    for (const set of this.sets.values()) set.stop();
    for (const dns of this.resolvers.values()) dns.stop();
    this.resolvers.clear();
    this.sets.clear();
  }

  /** A plain service: one pool, and one for streams made on first use. */
  private single(origin: Origin): Upstream {
    const tls = this.tls;
    const pool = this.pools.make(origin, { tls });
    let streamPool: BackendPool | undefined;
    let grpcPool: BackendPool | undefined;
    this.services.set(origin.key, {
      tlsId: tls?.id,
      retire: () => {
        for (const p of [pool, streamPool, grpcPool]) if (p !== undefined) this.pools.retire(p);
      },
    });
    return {
      origin,
      breaker: this.createBreaker(origin.key),
      tlsConnect: tlsConnectOptions(origin, tls),
      pick: () => pool,
      pickForStream: () => (streamPool ??= this.pools.make(origin, { use: 'stream', tls })),
      pickForGrpc: () => (grpcPool ??= this.pools.make(origin, { use: 'grpc', tls })),
      retryBudget: undefined,
    };
  }

  /** A named upstream: its targets' pools behind one balanced pick (targets.ts). */
  private balanced(origin: Origin, spec: UpstreamSpec): Upstream {
    let targets = this.sets.get(spec.name);
    if (targets === undefined) {
      targets = new TargetSet({
        spec,
        makePool: (target, use, health, tls) =>
          this.pools.make(target, { use, http2: spec.http2, health, tls: tls ?? this.tls }),
        events: this.options.events,
        now: this.options.now ?? Date.now,
      });
      this.sets.set(spec.name, targets);
    }
    this.applyTargets(spec, targets);
    const set = targets;
    return {
      origin,
      breaker: this.createBreaker(origin.key),
      tlsConnect: tlsConnectOptions(spec.targets[0]!.origin, spec.tls ?? this.tls),
      pick: (avoid) => set.pick(avoid).pool,
      pickForStream: (avoid) => set.pickFor('stream', avoid),
      pickForGrpc: (avoid) => set.pickFor('grpc', avoid),
      retryBudget: spec.targets.length > 1 ? set.retryBudget : undefined,
    };
  }

  /** Gives the set its targets: the spec's, or, for host names, the addresses they resolve to. */
  private applyTargets(spec: UpstreamSpec, targets: TargetSet): void {
    // Targets that stay keep their pools and health; removed ones drain.
    const apply = (next: UpstreamSpec) => {
      for (const gone of targets.apply(next)) this.pools.retire(gone);
    };
    let dns = this.resolvers.get(spec.name);
    if (!DnsTargets.needed(spec)) {
      dns?.stop();
      this.resolvers.delete(spec.name);
      return apply(spec);
    }
    if (dns === undefined) {
      dns = this.followDns(spec, apply);
      this.resolvers.set(spec.name, dns);
    } else dns.update(spec);
    apply(dns.expanded());
  }

  /** Resolves a named upstream's host names now and again, applying each change. */
  private followDns(spec: UpstreamSpec, apply: (next: UpstreamSpec) => void): DnsTargets {
    const { logger } = this.options;
    const name = spec.name;
    return new DnsTargets(spec, {
      lookup: this.options.lookup ?? lookupAll,
      changed: (next) => {
        apply(next);
        logger?.info({ upstream: name, targets: next.targets.map((t) => t.origin.key) }, 'upstream targets resolved');
      },
      failed: (hostname, err) =>
        logger?.warn({ upstream: name, hostname, err }, 'upstream target look-up failed; keeping its addresses'),
    });
  }
}

/** Every address of a host name, from the system resolver (as the connection pools use it). */
async function lookupAll(hostname: string): Promise<string[]> {
  return (await dnsLookup(hostname, { all: true })).map((a) => a.address);
}
