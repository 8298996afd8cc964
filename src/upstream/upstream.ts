/**
 * One Upstream per backend origin (`scheme://host:port`): its keep-alive connection pool and its
 * circuit breaker; a named upstream (`upstreams:`) has one pool per target and picks one per call
 * (targets.ts). The registry lives for the whole process, so pools, circuit state and target
 * health survive a configuration reload for origins and targets that still exist
 * (docs/design-decisions.md).
 */
import { rootCertificates } from 'node:tls';
import { Pool } from 'undici';
import type { Origin, UpstreamSpec } from './origin.js';
import { TargetSet, type Target, type TargetHealth } from './targets.js';
import type { RetryBudget } from './retry-budget.js';
import { DnsTargets, type LookupAll } from './dns-targets.js';
import type { Logger } from '../observability/logger.js';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { BackendPool } from './types.js';
import type { EventBus } from '../observability/events.js';
import { createDisabledBreaker, type CircuitBreaker } from '../circuit/breaker.js';

export type { BackendPool } from './types.js';

export interface Upstream {
  readonly origin: Origin;
  readonly breaker: CircuitBreaker;
  /**
   * The pool a standard, enrichment, mapping or auth call goes out on, asked for per call so the
   * choice can depend on the moment: a plain service has one pool (bounded keep-alive
   * connections), a named upstream one per target. `avoid`: a target that just failed the call
   * (a retry goes to another one when there is one).
   */
  pick(avoid?: BackendPool): BackendPool;
  /**
   * The pool an SSE stream goes out on: unlimited connections, made on first use. Long-lived
   * streams must never take the pooled connections standard and mapping calls wait for.
   */
  pickForStream(avoid?: BackendPool): BackendPool;
  /** A named upstream with several targets: the budget its retries take from; undefined: no retries. */
  readonly retryBudget: RetryBudget | undefined;
  /** TLS options of an https:// origin for connections made outside undici (WebSocket tunnels). */
  readonly tlsConnect: TlsConnectOptions | undefined;
}

export interface TlsConnectOptions {
  readonly ca?: string[];
  readonly rejectUnauthorized: boolean;
  /** SNI and certificate name when the target is an address resolved from a host name. */
  readonly servername?: string;
}

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
  /** TLS options for https:// origins (extra CA, verification). */
  readonly tls?: { readonly ca?: string; readonly rejectUnauthorized: boolean };
}

export interface UpstreamRegistry {
  forOrigin(origin: Origin): Upstream;
  all(): Iterable<Upstream>;
  /** Every target of every named upstream, for metrics and `portico routes`. */
  targets(): Iterable<{ readonly upstream: string; readonly target: Target }>;
  close(): Promise<void>;
}

export function createUpstreamRegistry(options: UpstreamOptions): UpstreamRegistry {
  const upstreams = new Map<string, Upstream>();
  const sets = new Map<string, TargetSet>();
  const resolvers = new Map<string, DnsTargets>();
  const lookup = options.lookup ?? lookupAll;
  const pools: BackendPool[] = [];
  const streamPools: BackendPool[] = [];
  const createBreaker = options.createBreaker ?? createDisabledBreaker;
  const now = options.now ?? Date.now;

  /** A pool to `origin`; `health`: a named upstream's target, whose calls record their outcome on it. */
  function makePool(
    origin: Origin,
    { streaming = false, http2 = false, health }: { streaming?: boolean; http2?: boolean; health?: TargetHealth } = {},
  ): BackendPool {
    const tlsConnect = tlsConnectOptions(origin, options.tls);
    const pool: BackendPool = {
      dispatcher: new Pool(`${origin.protocol}//${origin.hostname}:${origin.port}`, {
        connections: streaming ? null : options.connections,
        pipelining: 1,
        // Longer than a typical backend's keep-alive would make us reuse sockets it is closing.
        keepAliveTimeout: 4_000,
        ...(streaming ? {} : { keepAliveMaxTimeout: 600_000 }),
        ...(http2 ? { allowH2: true } : {}),
        ...(tlsConnect ? { connect: { ...tlsConnect } } : {}),
      }),
      inFlight: 0,
      connections: streaming ? Infinity : options.connections,
      origin,
      ...(health === undefined ? {} : { health }),
    };
    (streaming ? streamPools : pools).push(pool);
    return pool;
  }

  /** A named upstream: its targets' pools behind one balanced pick (targets.ts). */
  function balanced(origin: Origin, spec: UpstreamSpec): Upstream {
    let set = sets.get(spec.name);
    if (set === undefined) {
      set = new TargetSet({
        spec,
        makePool: (target, streaming, health) => makePool(target, { streaming, http2: spec.http2, health }),
        events: options.events,
        now,
      });
      sets.set(spec.name, set);
    }
    const targets = set;
    // Targets that stay keep their pools and health; removed ones drain.
    const apply = (next: UpstreamSpec) => {
      for (const gone of targets.apply(next)) void gone.dispatcher.close().catch(() => gone.dispatcher.destroy());
    };
    let dns = resolvers.get(spec.name);
    if (DnsTargets.needed(spec)) {
      if (dns === undefined) {
        const name = spec.name;
        dns = new DnsTargets(spec, {
          lookup,
          changed: (next) => {
            apply(next);
            options.logger?.info(
              { upstream: name, targets: next.targets.map((t) => t.origin.key) },
              'upstream targets resolved',
            );
          },
          failed: (hostname, err) =>
            options.logger?.warn(
              { upstream: name, hostname, err },
              'upstream target look-up failed; keeping its addresses',
            ),
        });
        resolvers.set(spec.name, dns);
      } else dns.update(spec);
      apply(dns.expanded());
    } else {
      dns?.stop();
      resolvers.delete(spec.name);
      apply(spec);
    }
    return {
      origin,
      breaker: createBreaker(origin.key),
      tlsConnect: tlsConnectOptions(spec.targets[0]!.origin, options.tls),
      pick: (avoid) => targets.pick(avoid).pool,
      pickForStream: (avoid) => targets.pickForStream(avoid),
      retryBudget: spec.targets.length > 1 ? targets.retryBudget : undefined,
    };
  }

  return {
    forOrigin(origin) {
      let u = upstreams.get(origin.key);
      // A named upstream's origin is new after a reload: its targets may have changed.
      if (u !== undefined && (origin.upstream === undefined || u.origin === origin)) return u;
      if (origin.upstream !== undefined) {
        u = balanced(origin, origin.upstream);
        upstreams.set(origin.key, u);
        return u;
      }
      const pool = makePool(origin);
      let streamPool: BackendPool | undefined;
      u = {
        origin,
        breaker: createBreaker(origin.key),
        tlsConnect: tlsConnectOptions(origin, options.tls),
        pick: () => pool,
        pickForStream: () => (streamPool ??= makePool(origin, { streaming: true })),
        retryBudget: undefined,
      };
      upstreams.set(origin.key, u);
      return u;
    },
    all: () => upstreams.values(),
    *targets() {
      for (const [upstream, set] of sets) for (const target of set.targets) yield { upstream, target };
    },
    async close() {
      await Promise.all(pools.map((p) => p.dispatcher.close().catch(() => p.dispatcher.destroy())));
      // Streams never end by themselves; their clients are gone by now, so cut what is left.
      await Promise.all(streamPools.map((p) => p.dispatcher.destroy()));
      upstreams.clear();
      for (const set of sets.values()) set.stop();
      for (const dns of resolvers.values()) dns.stop();
      resolvers.clear();
      sets.clear();
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
    ...(origin.serverName === undefined ? {} : { servername: origin.serverName }),
  };
}

/** Every address of a host name, from the system resolver (as the connection pools use it). */
async function lookupAll(hostname: string): Promise<string[]> {
  return (await dnsLookup(hostname, { all: true })).map((a) => a.address);
}
