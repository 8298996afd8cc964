/**
 * Counters per second over a fixed number of past seconds, for the status page: what happened in
 * the last minute, and second by second over the last five.
 *
 * Design: one Uint32Array holds `slots` rows; the row of second `s` is `s % slots`. Each row has
 * `fields` counters, then (optionally) a latency histogram of LATENCY_BUCKETS counts. Moving to a
 * newer second clears the rows skipped over, so recording is O(1) and the memory is fixed at
 * creation: `slots x (fields + buckets) x 4` bytes, whatever the traffic. Readers only look at
 * rows between the newest second recorded and `slots - 1` seconds before it: older rows were
 * cleared or belong to a second that wrapped around.
 */
import { LATENCY_BUCKETS, latencyBucket, percentileMs } from './latency-histogram.js';

export class SecondRing {
  private readonly data: Uint32Array;
  private readonly width: number;
  /** The newest second a row holds; -1 before the first record. */
  private newest = -1;

  constructor(
    readonly slots: number,
    readonly fields: number,
    readonly hasLatency: boolean,
  ) {
    this.width = fields + (hasLatency ? LATENCY_BUCKETS : 0);
    this.data = new Uint32Array(slots * this.width);
  }

  /** Adds `n` to counter `field` of second `sec`; a second older than the window is dropped. */
  add(sec: number, field: number, n = 1): void {
    const row = this.row(sec);
    if (row >= 0) this.data[row + field] = this.data[row + field]! + n;
  }

  /** Counts one latency in second `sec`'s histogram. */
  observe(sec: number, ms: number): void {
    const row = this.row(sec);
    if (row >= 0 && this.hasLatency) {
      const i = row + this.fields + latencyBucket(ms);
      this.data[i] = this.data[i]! + 1;
    }
  }

  /**
   * The counters and histogram of the `count` seconds that end with `sec` (included), summed.
   * Seconds never recorded count as zero.
   */
  sum(sec: number, count: number): { readonly fields: number[]; readonly latency: number[] } {
    const fields = new Array<number>(this.fields).fill(0);
    const latency = new Array<number>(this.hasLatency ? LATENCY_BUCKETS : 0).fill(0);
    for (let s = Math.max(sec - count + 1, this.oldest()); s <= Math.min(sec, this.newest); s++) {
      const row = (s % this.slots) * this.width;
      for (let f = 0; f < this.fields; f++) fields[f]! += this.data[row + f]!;
      for (let b = 0; b < latency.length; b++) latency[b]! += this.data[row + this.fields + b]!;
    }
    return { fields, latency };
  }

  /** The counters of one second, and its latency percentiles (null without a latency). */
  second(sec: number, quantiles: readonly number[]): { fields: number[]; percentiles: (number | null)[] } {
    const { fields, latency } = this.sum(sec, 1);
    return { fields, percentiles: quantiles.map((q) => percentileMs(latency, q)) };
  }

  /** The newest second recorded, or -1. */
  get newestSecond(): number {
    return this.newest;
  }

  private oldest(): number {
    return this.newest - this.slots + 1;
  }

  /** The offset of second `sec`'s row, moving the window forward when `sec` is newer; -1 when too old. */
  private row(sec: number): number {
    if (sec > this.newest) {
      // Rows of the seconds between the last one recorded and this one are stale: clear them.
      const from = this.newest < 0 ? sec : Math.max(this.newest + 1, sec - this.slots + 1);
      for (let s = from; s <= sec; s++) {
        const start = (s % this.slots) * this.width;
        this.data.fill(0, start, start + this.width);
      }
      this.newest = sec;
    } else if (sec < this.oldest()) return -1;
    return (sec % this.slots) * this.width;
  }
}
