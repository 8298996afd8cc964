/**
 * The targets of a named upstream (`upstreams:`, docs/upstreams.md): one pool per target, the
 * choice of a target per call (`balance`), and passive health (outlier detection): a target whose
 * calls fail `consecutiveFailures` times in a row (no connection, reset, timeout, or a 5xx) gets
 * no calls for `baseEjectionSec`, doubled each time it is ejected again before it served
 * `consecutiveFailures` calls in a row; never more than `maxEjectionPercent` of the targets at
 * once. Active health checks (health-check.ts) take unhealthy targets out the same way. When no
 * target is usable, calls go to all of them: refusing would turn a partial outage into a full
 * one. The upstream's circuit breaker stays one for all targets.
 */
import type { BackendPool, CallRecorder, PoolUse } from './types.js';
import type { Balance, ClientTls, Origin, UpstreamSpec } from '../config/types.js';
import type { EventBus } from '../observability/events.js';
import { ActiveHealthCheck } from './health-check.js';
import { RetryBudget } from './retry-budget.js';
import { smoothWeightedOrder } from './weighted-order.js';

/** One target: its pools (the stream and gRPC pools made on first use) and its passive health. */
export interface Target {
  readonly key: string;
  readonly weight: number;
  readonly pool: BackendPool;
  streamPool: BackendPool | undefined;
  grpcPool: BackendPool | undefined;
  readonly health: TargetHealth;
}

/** What a target's calls did lately, and whether it is ejected. */
export class TargetHealth implements CallRecorder {
  consecutiveFailures = 0;
  /** Ejections since the target last served a run of calls: the next one lasts 2^ejections x base. */
  ejections = 0;
  /** Until when the target gets no calls (a `now()` reading); 0 while it is in service. */
  ejectedUntil = 0;
  private served = 0;
  /** Unhealthy by the active health checks (health-check.ts): no calls while set. */
  down = false;
  /**
   * Its last call failed. Said once when it starts and once when it ends ('failing' and
   * 'recovered' events): least-request sends a failing target few calls, so it may never fail
   * `consecutiveFailures` times in a row, and without this a dead target would look healthy.
   */
  failing = false;
  checkPasses = 0;
  checkFailures = 0;
  /** Totals, read by the metrics at scrape time. */
  requests = 0;
  failures = 0;
  ejectionsTotal = 0;

  constructor(
    private readonly set: TargetSet,
    readonly target: string,
  ) {}

  /** One call's outcome on this target: failed is no answer, or a 5xx. */
  record(failed: boolean): void {
    this.requests++;
    if (!failed) {
      if (this.failing) this.set.failingChanged(this, false);
      this.consecutiveFailures = 0;
      if (this.ejections > 0 && ++this.served >= this.set.outlier.consecutiveFailures) this.ejections = 0;
      return;
    }
    this.failures++;
    this.served = 0;
    if (!this.failing) this.set.failingChanged(this, true);
    if (++this.consecutiveFailures >= this.set.outlier.consecutiveFailures) this.set.tryEject(this);
  }
}

export interface TargetSetOptions {
  readonly spec: UpstreamSpec;
  /** A pool to a target, whose calls record their outcome on `health`, its connections made with `tls`. */
  readonly makePool: (origin: Origin, use: PoolUse, health: TargetHealth, tls: ClientTls | undefined) => BackendPool;
  readonly events: EventBus | undefined;
  readonly now: () => number;
}

export class TargetSet {
  targets: readonly Target[] = [];
  outlier: UpstreamSpec['outlier'];
  private balance: Balance;
  /** Round-robin: target indexes in smooth weighted order, and the position in it. */
  private order: number[] = [];
  private cursor = 0;
  private ejected = 0;
  /** Targets the active checks find unhealthy. */
  private down = 0;
  /** Every target has the same weight. */
  private uniform = true;
  private readonly name: string;
  private checks: ActiveHealthCheck<Target> | undefined;
  /** The TLS the targets' pools connect with (the spec's `tls`). */
  private tls: ClientTls | undefined;
  /** What retries on this upstream may take (upstream/retry-budget.ts). */
  readonly retryBudget: RetryBudget;

  constructor(private readonly options: TargetSetOptions) {
    this.name = options.spec.name;
    this.outlier = options.spec.outlier;
    this.balance = options.spec.balance;
    this.retryBudget = new RetryBudget(options.now);
    this.apply(options.spec);
  }

  /**
   * Takes a (re)loaded spec: targets that stay keep their pools and health, new ones get pools,
   * removed ones are returned so their pools can drain.
   */
  apply(spec: UpstreamSpec): BackendPool[] {
    const old = new Map(this.targets.map((t) => [t.key, t]));
    // Other TLS (a new client certificate, CA): every target keeps its health but gets new pools,
    // so that new connections present the new certificate; the old pools drain.
    const renewed = this.targets.length > 0 && spec.tls?.id !== this.tls?.id;
    this.tls = spec.tls;
    const gone: BackendPool[] = [];
    const next: Target[] = spec.targets.map((t) => {
      const kept = old.get(t.origin.key);
      old.delete(t.origin.key);
      if (kept !== undefined && !renewed) return kept.weight === t.weight ? kept : { ...kept, weight: t.weight };
      if (kept !== undefined) gone.push(...poolsOf(kept));
      const health = kept?.health ?? new TargetHealth(this, t.origin.key);
      const pool = this.options.makePool(t.origin, 'pooled', health, this.tls);
      return { key: t.origin.key, weight: t.weight, pool, streamPool: undefined, grpcPool: undefined, health };
    });
    this.targets = next;
    this.configureChecks(spec.healthCheck);
    this.outlier = spec.outlier;
    this.balance = spec.balance;
    this.order = smoothWeightedOrder(next.map((t) => t.weight));
    this.uniform = next.every((t) => t.weight === next[0]!.weight);
    this.down = next.filter((t) => t.health.down).length;
    this.cursor = 0;
    this.ejected = next.filter((t) => t.health.ejectedUntil !== 0).length;
    return [...gone, ...[...old.values()].flatMap(poolsOf)];
  }

  /** Stops the active health checks (the registry closes). */
  stop(): void {
    this.checks?.stop();
  }

  private configureChecks(spec: UpstreamSpec['healthCheck']): void {
    if (spec === undefined) {
      this.checks?.stop();
      this.checks = undefined;
      for (const t of this.targets) t.health.down = false;
      this.down = 0;
      return;
    }
    if (this.checks !== undefined) {
      this.checks.update(spec);
      return;
    }
    this.checks = new ActiveHealthCheck(spec, {
      targets: () => this.targets,
      changed: (t, healthy) => {
        this.down += healthy ? -1 : 1;
        this.options.events?.emit('upstream:target', {
          upstream: this.name,
          target: t.key,
          state: healthy ? 'healthy' : 'unhealthy',
        });
      },
    });
  }

  /** The target of one call; `avoid`: the pool a retried call just failed on, skipped while another is usable. */
  pick(avoid?: BackendPool): Target {
    const targets = this.targets;
    if (targets.length === 1) return targets[0]!;
    const now = this.ejected > 0 ? this.options.now() : 0;
    const usable = (t: Target) =>
      (avoid === undefined || (t.pool !== avoid && t.streamPool !== avoid && t.grpcPool !== avoid)) &&
      !t.health.down &&
      (t.health.ejectedUntil === 0 || this.restoredAt(t, now));
    switch (this.balance) {
      case 'round-robin':
        return this.roundRobin(usable);
      case 'random':
        return this.weightedRandom(usable) ?? this.weightedRandom(() => true)!;
      case 'least-request': {
        // Power of two choices: two random usable targets, the lesser loaded one.
        if (avoid === undefined && this.ejected === 0 && this.down === 0 && this.uniform) {
          // Every target usable and weighted alike (the common case): the next target in turn
          // against a random other one. Under an even load the turn decides, as round-robin does
          // (calls spread evenly, few connections per target); under an uneven one the load does.
          const n = targets.length;
          const i = this.nextIndex();
          return lesserLoaded(targets[i]!, targets[(i + 1 + Math.floor(Math.random() * (n - 1))) % n]!);
        }
        const a = this.weightedRandom(usable) ?? this.weightedRandom(() => true)!;
        const b = this.weightedRandom((t) => t !== a && usable(t));
        return b === undefined ? a : lesserLoaded(a, b);
      }
    }
  }

  /** A stream's or a gRPC call's target: chosen like any call, on the target's pool for that use. */
  pickFor(use: 'stream' | 'grpc', avoid?: BackendPool): BackendPool {
    const t = this.pick(avoid);
    return (t[`${use}Pool`] ??= this.options.makePool(t.pool.origin, use, t.health, this.tls));
  }

  /** Records and reports a target's first failure after a success, or its first success after failures. */
  failingChanged(health: TargetHealth, failing: boolean): void {
    health.failing = failing;
    this.options.events?.emit('upstream:target', {
      upstream: this.name,
      target: health.target,
      state: failing ? 'failing' : 'recovered',
    });
  }

  /** Ejects a target that failed too often, unless that would pass maxEjectionPercent. */
  tryEject(health: TargetHealth): void {
    if (!this.outlier.enabled || health.ejectedUntil !== 0) return;
    if (((this.ejected + 1) * 100) / this.targets.length > this.outlier.maxEjectionPercent) return;
    const ms = this.outlier.baseEjectionMs * 2 ** Math.min(health.ejections, 10);
    health.ejectedUntil = this.options.now() + ms;
    health.ejections++;
    health.ejectionsTotal++;
    health.consecutiveFailures = 0;
    this.ejected++;
    this.options.events?.emit('upstream:target', {
      upstream: this.name,
      target: health.target,
      state: 'ejected',
      ejectedForMs: ms,
    });
  }

  /** Whether an ejected target's time is up (it is then back in service). */
  private restoredAt(t: Target, now: number): boolean {
    if (now < t.health.ejectedUntil) return false;
    t.health.ejectedUntil = 0;
    this.ejected--;
    this.options.events?.emit('upstream:target', { upstream: this.name, target: t.key, state: 'restored' });
    return true;
  }

  /** The next usable target in turn; when none is usable, the next one anyway. */
  private roundRobin(usable: (t: Target) => boolean): Target {
    for (let i = 0; i < this.order.length; i++) {
      const t = this.nextInTurn();
      if (usable(t)) return t;
    }
    return this.nextInTurn();
  }

  private nextInTurn(): Target {
    return this.targets[this.nextIndex()]!;
  }

  /** The index of the next target in the weighted turn. */
  private nextIndex(): number {
    const i = this.order[this.cursor]!;
    this.cursor = (this.cursor + 1) % this.order.length;
    return i;
  }

  private weightedRandom(accept: (t: Target) => boolean): Target | undefined {
    let total = 0;
    for (const t of this.targets) if (accept(t)) total += t.weight;
    if (total === 0) return undefined;
    let r = Math.random() * total;
    for (const t of this.targets) {
      if (!accept(t)) continue;
      r -= t.weight;
      if (r < 0) return t;
    }
    return undefined;
  }
}

/**
 * Of two targets, the one failing less, then the one with fewer calls in flight per weight. A
 * target that fails fast (a refused connection) has few calls in flight: by load alone it would
 * draw more calls, so a run of failures counts first.
 */
function lesserLoaded(a: Target, b: Target): Target {
  const af = a.health.consecutiveFailures;
  const bf = b.health.consecutiveFailures;
  if (af !== bf) return af < bf ? a : b;
  return b.pool.inFlight / b.weight < a.pool.inFlight / a.weight ? b : a;
}

/** A target's pools: the bounded one, and the stream and gRPC pools once made. */
function poolsOf(t: Target): BackendPool[] {
  return [t.pool, t.streamPool, t.grpcPool].filter((p) => p !== undefined);
}
