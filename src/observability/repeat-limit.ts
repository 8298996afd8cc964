/**
 * Rate limit for identical warning lines. During an outage every request can produce the same
 * warning (a mapping service down, a backend refusing): logging each one floods the output and
 * buries everything else, while the count is what an operator needs.
 *
 * Design: lines are grouped by a key that leaves out what differs between requests (request id,
 * URL). The first line of a key is written at once and opens a window of `windowMs`; identical
 * lines inside the window are only counted. When the window closes with a count, one line is
 * written: the last event's fields plus `repeated` (lines not written) and, when the events carry
 * one, `repeatedItems` (their summed item count); a new window then opens, so a lasting outage
 * writes one line per key and window. A window that closes without a repeat forgets the key.
 * At most `maxKeys` keys are tracked; past that, lines are written as they come (memory stays
 * bounded, nothing is lost).
 */

/** How long identical warnings are counted instead of written, after one is written. */
export const REPEAT_WINDOW_MS = 10_000;

/** Distinct warnings tracked at once. */
const MAX_KEYS = 1000;

/** What was held back since the last written line of a key. */
export interface Repeats {
  /** Identical lines counted, not written. */
  readonly lines: number;
  /** Their summed `items`. */
  readonly items: number;
}

export interface RepeatLimitOptions<E> {
  /** Writes one line: an event, with what was held back before it (a window's summary) or none. */
  readonly write: (event: E, repeats: Repeats | undefined) => void;
  /** The item count an event stands for (0 when not given). */
  readonly items?: (event: E) => number;
  /** REPEAT_WINDOW_MS when not given. */
  readonly windowMs?: number | undefined;
  readonly maxKeys?: number | undefined;
}

interface Slot<E> {
  lines: number;
  items: number;
  last: E;
}

/** Returns `(key, event)`: writes the event, or counts it when its key was written within the window. */
export function limitRepeats<E>(options: RepeatLimitOptions<E>): (key: string, event: E) => void {
  const { write, items = () => 0 } = options;
  const windowMs = options.windowMs ?? REPEAT_WINDOW_MS;
  const maxKeys = options.maxKeys ?? MAX_KEYS;
  const slots = new Map<string, Slot<E>>();

  const closeWindow = (key: string) => {
    const slot = slots.get(key);
    if (slot === undefined) return;
    if (slot.lines === 0) {
      slots.delete(key);
      return;
    }
    write(slot.last, { lines: slot.lines, items: slot.items });
    slot.lines = 0;
    slot.items = 0;
    schedule(key);
  };
  const schedule = (key: string) => {
    // A pending summary must not hold the process open on shutdown.
    setTimeout(closeWindow, windowMs, key).unref();
  };

  return (key, event) => {
    const slot = slots.get(key);
    if (slot !== undefined) {
      slot.lines++;
      slot.items += items(event);
      slot.last = event;
      return;
    }
    write(event, undefined);
    if (slots.size >= maxKeys) return;
    slots.set(key, { lines: 0, items: 0, last: event });
    schedule(key);
  };
}
