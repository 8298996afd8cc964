/**
 * The calendar windows of quotas, in UTC: a minute starts at :00, an hour at :00:00, a day at
 * 00:00 and a month on the 1st at 00:00 (docs/consumers.md#quotas). Fixed calendar windows, as
 * Kong and Tyk users expect of "1,000 a day": every caller's day ends at the same moment, and the
 * answer to "when may I call again" is that moment.
 *
 * The bounds of the current window are kept and recomputed only when the clock leaves them, so a
 * request does no date arithmetic but a comparison.
 */
import type { QuotaWindow } from '../config/schema.js';

/** One window: [start, end) in milliseconds since the epoch. */
export interface WindowBounds {
  readonly start: number;
  readonly end: number;
}

const MINUTE_MS = 60_000;
const FIXED_MS: Readonly<Record<Exclude<QuotaWindow, 'month'>, number>> = {
  minute: MINUTE_MS,
  hour: 60 * MINUTE_MS,
  day: 24 * 60 * MINUTE_MS,
};

/** The window of kind `window` that holds the instant `now` (ms since the epoch, UTC). */
export function windowAt(window: QuotaWindow, now: number): WindowBounds {
  if (window === 'month') {
    const d = new Date(now);
    const y = d.getUTCFullYear();
    const m = d.getUTCMonth();
    return { start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1) };
  }
  const length = FIXED_MS[window];
  const start = Math.floor(now / length) * length;
  return { start, end: start + length };
}

/** The current window of each kind, recomputed only when `now` leaves it. */
export interface WindowClock {
  bounds(window: QuotaWindow, now: number): WindowBounds;
}

/** A clock of windows that remembers the current one of each kind. */
export function createWindowClock(): WindowClock {
  const current = new Map<QuotaWindow, WindowBounds>();
  return {
    bounds(window, now) {
      let b = current.get(window);
      if (b === undefined || now >= b.end || now < b.start) {
        b = windowAt(window, now);
        current.set(window, b);
      }
      return b;
    },
  };
}
