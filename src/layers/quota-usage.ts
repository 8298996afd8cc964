/**
 * What the status page shows of limits and quotas per caller (docs/dashboard.md): the latest
 * counts of the callers this process decided for, and their refusals, for the top few only.
 *
 * Design note. An LRU of at most `maxKeys` callers (the least recently seen forgotten first) keeps,
 * per caller, references to its last decision's arrays: observing a request allocates nothing
 * once the caller is known. The page reads the top `n` by the fullest window, so however many
 * callers there are, the page and the JSON API stay small. Metrics never name a caller
 * (observability/metrics/requests.ts counts by route).
 */
import { LRUCache } from 'lru-cache';
import type { QuotaWindow } from '../config/schema.js';
import type { QuotaDecision, QuotaLimitList, QuotaObserver } from './quota.js';
import type { WindowBounds } from './quota-windows.js';

/** One caller on the status page. */
export interface CallerUsage {
  /** What it is counted by: `consumer:ID`, `claim:VALUE`, `header:VALUE` or a client address (long values hashed). */
  readonly caller: string;
  /** The route of a route's own limits; undefined for the shared ones. */
  readonly route: string | undefined;
  readonly plan: string | undefined;
  /** Its quota windows still running: requests counted, the limit, seconds until the window ends. */
  readonly windows: readonly { window: QuotaWindow; used: number; limit: number; resetSec: number }[];
  /** Requests refused by a quota, and by a rate limit, since this process first saw the caller. */
  readonly quotaRefused: number;
  readonly rateLimited: number;
}

interface Entry {
  plan: string | undefined;
  limits: QuotaLimitList;
  windows: readonly WindowBounds[];
  counts: readonly number[];
  quotaRefused: number;
  rateLimited: number;
}

export interface QuotaUsage {
  /** Records a quota decision (the quota layer's observer). */
  readonly observe: QuotaObserver;
  /** Records a rate-limit refusal of `key` (scope and caller). */
  rateLimited(key: string): void;
  /** The `n` callers nearest to (or past) a limit, fullest first; `now` in ms since the epoch. */
  top(n: number, now?: number): CallerUsage[];
}

const NONE: readonly never[] = Object.freeze([]);

/** The tracker, made once per process; `maxKeys` bounds the callers remembered. */
export function createQuotaUsage(options: { maxKeys?: number } = {}): QuotaUsage {
  const entries = new LRUCache<string, Entry>({ max: options.maxKeys ?? 1_000 });
  const entryOf = (key: string): Entry => {
    let e = entries.get(key);
    if (e === undefined) {
      e = { plan: undefined, limits: NONE, windows: NONE, counts: NONE, quotaRefused: 0, rateLimited: 0 };
      entries.set(key, e);
    }
    return e;
  };
  return {
    observe(key, plan, limits, windows, decision: QuotaDecision) {
      const e = entryOf(key);
      e.plan = plan;
      e.limits = limits;
      e.windows = windows;
      e.counts = decision.counts;
      if (!decision.admitted) e.quotaRefused++;
    },
    rateLimited(key) {
      entryOf(key).rateLimited++;
    },
    top(n, now = Date.now()) {
      const rows: { fill: number; usage: CallerUsage }[] = [];
      for (const [key, e] of entries.entries()) {
        const windows = [];
        let fill = 0;
        for (let i = 0; i < e.limits.length; i++) {
          const b = e.windows[i]!;
          if (b.end <= now) continue;
          const { window, limit } = e.limits[i]!;
          const used = e.counts[i]!;
          windows.push({ window, used, limit, resetSec: Math.ceil((b.end - now) / 1000) });
          fill = Math.max(fill, used / limit);
        }
        if (windows.length === 0 && e.rateLimited === 0 && e.quotaRefused === 0) continue;
        const cut = key.indexOf('\n');
        rows.push({
          // Refusals rank a caller as full: the one being turned away is the one to look at.
          fill: e.quotaRefused + e.rateLimited > 0 ? Math.max(fill, 1) : fill,
          usage: {
            caller: cut < 0 ? key : key.slice(cut + 1),
            route: cut < 0 ? undefined : key.slice(0, cut),
            plan: e.plan,
            windows,
            quotaRefused: e.quotaRefused,
            rateLimited: e.rateLimited,
          },
        });
      }
      rows.sort((a, b) => b.fill - a.fill);
      return rows.slice(0, n).map((r) => r.usage);
    },
  };
}
