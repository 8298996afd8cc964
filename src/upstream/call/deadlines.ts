/**
 * The deadlines of backend calls (no response head within `timeouts.backendSec`, a response body
 * silent for `timeouts.backendIdleSec`), checked by one sweep over the calls in flight instead of
 * a timer per call.
 *
 * Why not undici's `headersTimeout` and `bodyTimeout`: undici arms its connection's timer anew
 * whenever the wait changes, and a kept-alive connection goes keep-alive, headers, body, keep-alive
 * on every request. Each timer longer than a second is an object that stays in undici's timer list
 * for up to a second after it is cleared: under load those objects reach the old generation and
 * die there, and mark-compacts run every few seconds instead of every few minutes, which was most
 * of the gateway's p99 (docs/performance.md "Backend deadlines").
 *
 * Design note:
 * - a watched call carries its own deadline (`deadlineAt`, a `performance.now()` time) and moves
 *   it as it goes, and its own links in the sweep's list: nothing is allocated per call. A Set of
 *   the calls in flight would be simpler, but a Set that every request adds to and deletes from
 *   makes V8 keep its former members past their scavenge: in a 3 s test of 50 objects in flight,
 *   132 mark-compacts with a Set against 14 with links or with nothing (docs/performance.md);
 * - one unref'd interval checks the set, a tenth of the shortest wait being watched apart (5 ms to
 *   250 ms): a deadline is acted on from its time to one period later, never before. The interval
 *   stops when nothing is watched, so an idle gateway has no timer;
 * - the sweep only calls `overdue`; the call decides what a passed deadline means (it may move the
 *   deadline and stay watched, or end itself and `unwatch`).
 */

export interface Watched {
  /** `performance.now()` time from which the call is overdue. */
  deadlineAt: number;
  /** Called by a sweep at or after `deadlineAt`, with the sweep's time. */
  overdue(now: number): void;
  /** The sweep's links (its list of watched calls); only DeadlineSweep sets them. */
  sweepPrev: Watched | undefined;
  sweepNext: Watched | undefined;
  /** The sweep watching this call, if any. */
  sweepBy: DeadlineSweep | undefined;
}

export const MIN_PERIOD_MS = 5;
export const MAX_PERIOD_MS = 250;

/** How often a wait of `waitMs` is checked: a tenth of it, within [MIN_PERIOD_MS, MAX_PERIOD_MS]. */
export function sweepPeriodFor(waitMs: number): number {
  return Math.min(MAX_PERIOD_MS, Math.max(MIN_PERIOD_MS, Math.floor(waitMs / 10)));
}

export class DeadlineSweep {
  private first: Watched | undefined;
  private last: Watched | undefined;
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private periodMs = MAX_PERIOD_MS;

  /** @param now the clock of the deadlines (ms); `performance.now()` but in tests. */
  constructor(readonly now: () => number = () => performance.now()) {}

  /** Watches `w` until `unwatch`; `waitMs`, the wait its deadline guards, sets how often sweeps run. */
  watch(w: Watched, waitMs: number): void {
    if (w.sweepBy === undefined) {
      w.sweepBy = this;
      w.sweepPrev = this.last;
      w.sweepNext = undefined;
      if (this.last === undefined) this.first = w;
      else this.last.sweepNext = w;
      this.last = w;
      this.count++;
    }
    const period = sweepPeriodFor(waitMs);
    if (this.timer === undefined || period < this.periodMs) this.restart(period);
  }

  unwatch(w: Watched): void {
    if (w.sweepBy !== this) return;
    const { sweepPrev: prev, sweepNext: next } = w;
    if (prev === undefined) this.first = next;
    else prev.sweepNext = next;
    if (next === undefined) this.last = prev;
    else next.sweepPrev = prev;
    w.sweepPrev = w.sweepNext = w.sweepBy = undefined;
    this.count--;
  }

  /** Calls being watched. */
  get size(): number {
    return this.count;
  }

  /** Whether the interval runs (it stops at the first sweep that finds nothing watched). */
  get sweeping(): boolean {
    return this.timer !== undefined;
  }

  private restart(periodMs: number): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.periodMs = periodMs;
    this.timer = setInterval(this.check, periodMs);
    // A deadline never keeps a stopping gateway alive: the calls it guards hold their sockets.
    this.timer.unref();
  }

  /** Acts on every deadline passed by now: what the interval runs. */
  readonly check = (): void => {
    if (this.count === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      this.periodMs = MAX_PERIOD_MS;
      return;
    }
    const now = this.now();
    let w = this.first;
    while (w !== undefined) {
      // Read before `overdue`: an overdue call that ends unwatches itself, which clears its links.
      const next = w.sweepNext;
      if (now >= w.deadlineAt) w.overdue(now);
      w = next;
    }
  };
}

/** The sweep the backend calls of the process are watched by. */
export const callDeadlines = new DeadlineSweep();
