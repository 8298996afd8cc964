/**
 * The status page's totals of split and mirrored routes since the start: requests per arm of
 * each split, copies answered, failed and dropped per mirrored route. Each event costs one map
 * look-up and an increment; memory is bounded by the configuration (its routes and arms), and
 * `prune` forgets the routes a reload removed.
 */
import type { GatewayEvents } from '../observability/events.js';

/** A mirrored route's copies since the start. */
export interface MirrorTotals {
  answered: number;
  failed: number;
  dropped: number;
}

export class TrafficTotals {
  private readonly arms = new Map<string, Map<string, number>>();
  private readonly mirrors = new Map<string, MirrorTotals>();

  splitChoice(e: GatewayEvents['split:choice']): void {
    let arms = this.arms.get(e.routeId);
    if (arms === undefined) this.arms.set(e.routeId, (arms = new Map()));
    arms.set(e.arm, (arms.get(e.arm) ?? 0) + 1);
  }

  mirrorEnd(e: GatewayEvents['mirror:end']): void {
    this.mirrorOf(e.routeId)[e.outcome]++;
  }

  mirrorDropped(e: GatewayEvents['mirror:dropped']): void {
    this.mirrorOf(e.routeId).dropped++;
  }

  /** Requests sent to `arm` of the split route `routeId`. */
  armRequests(routeId: string, arm: string): number {
    return this.arms.get(routeId)?.get(arm) ?? 0;
  }

  mirror(routeId: string): MirrorTotals {
    return { ...(this.mirrors.get(routeId) ?? { answered: 0, failed: 0, dropped: 0 }) };
  }

  /** Forgets the routes not in `keep`. */
  prune(keep: ReadonlySet<string>): void {
    for (const id of this.arms.keys()) if (!keep.has(id)) this.arms.delete(id);
    for (const id of this.mirrors.keys()) if (!keep.has(id)) this.mirrors.delete(id);
  }

  private mirrorOf(routeId: string): MirrorTotals {
    let m = this.mirrors.get(routeId);
    if (m === undefined) this.mirrors.set(routeId, (m = { answered: 0, failed: 0, dropped: 0 }));
    return m;
  }
}
