/**
 * Quotas (`config.quotas`, a route's `quota`; docs/consumers.md#quotas): requests counted per
 * consumer (or claim, header, address: `quotas.key`) over calendar windows in UTC, with limits per
 * plan. A request is admitted when every window of its limits has room; it then counts in every
 * window. A refused request counts in none, so a caller that keeps trying past its quota does
 * not push its next window's start further away.
 *
 * Design note. The local store keeps, per key, the count and start of each window in an LRU
 * bounded by `maxKeys` whose entries expire at the end of their longest window; a forgotten entry
 * under memory pressure starts that key's windows at zero, which is why shared quotas belong in
 * Redis (redis-quota.ts: one script checks and counts every window in one round trip). A reload
 * that changes the numbers applies them to the counts already made: the count of a window is the
 * requests admitted in it, whatever the limit was.
 */
import { LRUCache } from 'lru-cache';
import type { CompiledRoute, Exchange, Layer } from '../pipeline/types.js';
import { QUOTA_WINDOWS, type QuotaLimits, type QuotasConfig, type QuotaWindow } from '../config/schema.js';
import { parseLimitKey, type LimitKey } from '../config/syntax/limit-key.js';
import { sendError } from '../response/send-error.js';
import type { RequestKey } from './limit-key.js';
import type { WindowBounds, WindowClock } from './quota-windows.js';

/** One window's limit. */
export interface QuotaLimit {
  readonly window: QuotaWindow;
  readonly limit: number;
}

/** The windows a caller is held to, shortest first; empty: not metered. */
export type QuotaLimitList = readonly QuotaLimit[];

export interface QuotaPolicy {
  /** Counter namespace: '' for config.quotas, the route id for a route's own. */
  readonly scope: string;
  readonly key: LimitKey;
  /** The limits of a caller without a listed plan. */
  readonly defaults: QuotaLimitList;
  /** The limits of each plan, by name. */
  readonly plans: ReadonlyMap<string, QuotaLimitList>;
}

/** The windows of `limits` that are set, shortest first. */
function limitList(limits: QuotaLimits): QuotaLimitList {
  const list: QuotaLimit[] = [];
  for (const window of QUOTA_WINDOWS) {
    const limit = limits[window];
    if (limit !== undefined) list.push({ window, limit });
  }
  return Object.freeze(list);
}

function planMap(plans: Readonly<Record<string, QuotaLimits>> | undefined): ReadonlyMap<string, QuotaLimitList> {
  return new Map(Object.entries(plans ?? {}).map(([name, limits]) => [name, limitList(limits)]));
}

/** The quota of a route, or undefined when it has none. Decided at config load. */
export function routeQuota(
  route: Pick<CompiledRoute, 'id' | 'quota'>,
  settings: Omit<QuotasConfig, 'redisCommandTimeoutMs'> | undefined,
): QuotaPolicy | undefined {
  const own = route.quota;
  if (own?.enabled === false) return undefined;
  const key = parseLimitKey(own?.key ?? settings?.key ?? 'consumer');
  const defaults = own === undefined ? [] : limitList(own);
  if (own !== undefined && (defaults.length > 0 || own.plans !== undefined))
    return { scope: `${route.id}\n`, key, defaults, plans: planMap(own.plans) };
  // Validation refuses a route quota without numbers when config.quotas is absent.
  if (settings === undefined) return undefined;
  return { scope: '', key, defaults: limitList(settings), plans: planMap(settings.plans) };
}

/** What a store answers: admitted (and counted) or not, and each window's count after the decision. */
export interface QuotaDecision {
  readonly admitted: boolean;
  /** Per window of the limits, in their order: requests counted in it, this one included when admitted. */
  readonly counts: readonly number[];
}

/** Where quota counters live: this process (createQuotaCounters) or Redis (redis-quota.ts). */
export interface QuotaStore {
  /** Admits and counts one request of `key` when every window of `limits` has room. */
  take(key: string, limits: QuotaLimitList, windows: readonly WindowBounds[]): QuotaDecision | Promise<QuotaDecision>;
}

/** The process's own counters. */
export interface QuotaCounters extends QuotaStore {
  take(key: string, limits: QuotaLimitList, windows: readonly WindowBounds[]): QuotaDecision;
  /**
   * Raises the counts of `key` to the shared ones Redis answered (`counts`, per window of
   * `limits`), so that a decision made without Redis starts from them. A count already higher
   * stays: it holds requests Redis never saw.
   */
  sync(key: string, limits: QuotaLimitList, windows: readonly WindowBounds[], counts: readonly number[]): void;
  /** Keys currently counted (for metrics). */
  readonly size: number;
}

interface Slot {
  start: number;
  count: number;
}
type Entry = Partial<Record<QuotaWindow, Slot>>;

export interface QuotaCountersOptions {
  /** Most keys counted; least recently used are forgotten first. */
  readonly maxKeys?: number;
  /** Milliseconds clock of the LRU's expiry (injected in tests): the same clock as the windows'. */
  readonly now?: () => number;
}

/** The process-wide local counters. */
export function createQuotaCounters(options: QuotaCountersOptions = {}): QuotaCounters {
  const now = options.now ?? Date.now;
  // Made on the first counted request, as the rate limiter's buckets: lru-cache allocates for `max` up front.
  let entries: LRUCache<string, Entry> | undefined;
  /** The slots of `key` for the current windows, a new window's at zero; `keep` stores a changed entry. */
  const slotsOf = (key: string, limits: QuotaLimitList, windows: readonly WindowBounds[]) => {
    entries ??= new LRUCache<string, Entry>({ max: options.maxKeys ?? 100_000, perf: { now } });
    let entry = entries.get(key);
    let renewed = entry === undefined;
    entry ??= {};
    const slots: Slot[] = [];
    for (let i = 0; i < limits.length; i++) {
      const window = limits[i]!.window;
      const start = windows[i]!.start;
      let slot = entry[window];
      if (slot === undefined || slot.start !== start) {
        slot = entry[window] = { start, count: 0 };
        renewed = true;
      }
      slots.push(slot);
    }
    const stored = entry;
    const keep = () => {
      // Kept until its longest window ends: by then every count in it would start again at zero.
      if (renewed) entries!.set(key, stored, { ttl: Math.max(1, Math.max(...windows.map((w) => w.end)) - now()) });
    };
    return { slots, keep };
  };
  return {
    take(key, limits, windows) {
      const { slots, keep } = slotsOf(key, limits, windows);
      let admitted = true;
      for (let i = 0; i < limits.length; i++) if (slots[i]!.count >= limits[i]!.limit) admitted = false;
      if (admitted) for (const slot of slots) slot.count++;
      keep();
      return { admitted, counts: slots.map((s) => s.count) };
    },
    sync(key, limits, windows, counts) {
      const { slots, keep } = slotsOf(key, limits, windows);
      for (let i = 0; i < slots.length; i++) slots[i]!.count = Math.max(slots[i]!.count, counts[i]!);
      keep();
    },
    get size() {
      return entries?.size ?? 0;
    },
  };
}

/** What the status page learns of each decision (admin/quota-usage.ts); undefined: nobody asks. */
export type QuotaObserver = (
  key: string,
  plan: string | undefined,
  limits: QuotaLimitList,
  windows: readonly WindowBounds[],
  decision: QuotaDecision,
) => void;

export interface QuotaLayerOptions {
  readonly store: QuotaStore;
  readonly keyOf: RequestKey;
  readonly windows: WindowClock;
  /** Wall clock, ms since the epoch (injected in tests): calendar windows follow it. */
  readonly now?: () => number;
  readonly observe?: QuotaObserver | undefined;
}

/**
 * Refuses a request over its quota with 429 `GW_QUOTA_EXCEEDED` and `Retry-After` until the end of
 * the window that refused it (the latest, when several did). Every answer carries one
 * `RateLimit-Policy` and one `RateLimit` item per window (`"quota-day";q=1000;w=86400` and
 * `"quota-day";r=990;t=3600`, draft-ietf-httpapi-ratelimit-headers-11), after the rate limit's.
 */
export function quotaLayer(policy: QuotaPolicy, options: QuotaLayerOptions): Layer {
  const { store, keyOf, windows: clock, observe } = options;
  const now = options.now ?? Date.now;
  const { scope, defaults, plans } = policy;
  return (next) => {
    const decide = (
      ex: Exchange,
      at: number,
      limits: QuotaLimitList,
      bounds: readonly WindowBounds[],
      d: QuotaDecision,
    ): Promise<void> => {
      const res = ex.res;
      let policyField = '';
      let field = '';
      let retryAfter = 0;
      for (let i = 0; i < limits.length; i++) {
        const { window, limit } = limits[i]!;
        const b = bounds[i]!;
        const reset = Math.max(1, Math.ceil((b.end - at) / 1000));
        const sep = i === 0 ? '' : ', ';
        policyField += `${sep}"quota-${window}";q=${limit};w=${Math.round((b.end - b.start) / 1000)}`;
        field += `${sep}"quota-${window}";r=${Math.max(0, limit - d.counts[i]!)};t=${reset}`;
        if (!d.admitted && d.counts[i]! >= limit && reset > retryAfter) retryAfter = reset;
      }
      const policyHeader = joined(res.getHeader('ratelimit-policy'), policyField);
      const header = joined(res.getHeader('ratelimit'), field);
      if (d.admitted) {
        res.setHeader('ratelimit-policy', policyHeader);
        res.setHeader('ratelimit', header);
        return next(ex);
      }
      ex.errorCode = 'GW_QUOTA_EXCEEDED';
      sendError(res, 'GW_QUOTA_EXCEEDED', {
        'retry-after': String(retryAfter),
        'ratelimit-policy': policyHeader,
        ratelimit: header,
      });
      return Promise.resolve();
    };
    return (ex) => {
      const plan = ex.consumer?.plan;
      const limits = plan === undefined ? defaults : (plans.get(plan) ?? defaults);
      if (limits.length === 0) return next(ex);
      const at = now();
      const bounds = limits.map((l) => clock.bounds(l.window, at));
      const key = scope + keyOf(ex);
      const d = store.take(key, limits, bounds);
      if (!('then' in d)) {
        observe?.(key, plan, limits, bounds, d);
        return decide(ex, at, limits, bounds, d);
      }
      return d.then((decision) => {
        observe?.(key, plan, limits, bounds, decision);
        return decide(ex, at, limits, bounds, decision);
      });
    };
  };
}

/** A structured-field list continued: the rate limit's items first, when it set any. */
function joined(before: ReturnType<Exchange['res']['getHeader']>, items: string): string {
  return typeof before === 'string' && before !== '' ? `${before}, ${items}` : items;
}
