/**
 * A fixed latency histogram for the status page's p50 and p99: bucket upper bounds grow by 2^(1/3)
 * (about 26%) from 0.05 ms, so 60 buckets reach 40 s and the last one takes everything slower.
 * A percentile read from it is within one bucket of the true value: close enough to see where
 * latency comes from, at a fixed cost per request and a fixed size per second of history.
 */

/** Buckets per histogram. */
export const LATENCY_BUCKETS = 60;
const FIRST_MS = 0.05;
const STEPS_PER_DOUBLING = 3;

/** The upper bound of bucket `i`, in milliseconds (Infinity for the last one). */
export function bucketUpperMs(i: number): number {
  return i >= LATENCY_BUCKETS - 1 ? Infinity : FIRST_MS * 2 ** (i / STEPS_PER_DOUBLING);
}

/** The bucket that counts a latency of `ms`. */
export function latencyBucket(ms: number): number {
  if (!(ms > FIRST_MS)) return 0;
  const i = Math.ceil(Math.log2(ms / FIRST_MS) * STEPS_PER_DOUBLING - 1e-9);
  return i < LATENCY_BUCKETS ? i : LATENCY_BUCKETS - 1;
}

/**
 * The `q` quantile (0.5, 0.99) of a histogram in milliseconds, interpolated within its bucket as
 * Prometheus' histogram_quantile does; null when the histogram is empty. The last bucket has no
 * upper bound: a quantile that falls in it reads as its lower bound.
 */
export function percentileMs(counts: readonly number[], q: number): number | null {
  let total = 0;
  for (const c of counts) total += c;
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i]!;
    if (c > 0 && below + c >= rank) {
      const lower = i === 0 ? 0 : bucketUpperMs(i - 1);
      const upper = bucketUpperMs(i);
      if (upper === Infinity) return round(lower);
      return round(lower + (upper - lower) * ((rank - below) / c));
    }
    below += c;
  }
  return round(bucketUpperMs(counts.length - 2));
}

/** Milliseconds to three significant digits: finer is noise at this resolution. */
function round(ms: number): number {
  return Number(ms.toPrecision(3));
}
