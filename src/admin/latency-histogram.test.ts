import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LATENCY_BUCKETS, bucketUpperMs, latencyBucket, percentileMs } from './latency-histogram.js';

describe('latency histogram', () => {
  it('puts a latency in the first bucket whose upper bound holds it', () => {
    for (const ms of [0, 0.01, 0.05, 0.051, 0.3, 1, 2.5, 17, 999, 12_345]) {
      const i = latencyBucket(ms);
      assert.ok(ms <= bucketUpperMs(i), `${ms} <= upper of ${i}`);
      if (i > 0) assert.ok(ms > bucketUpperMs(i - 1), `${ms} > upper of ${i - 1}`);
    }
  });

  it('counts anything slower than 40 s in the last bucket', () => {
    assert.equal(latencyBucket(40_000 * 10), LATENCY_BUCKETS - 1);
    assert.equal(bucketUpperMs(LATENCY_BUCKETS - 1), Infinity);
  });

  it('reads p50 and p99 within one bucket (26%) of the true value', () => {
    const counts = new Array<number>(LATENCY_BUCKETS).fill(0);
    // 1..1000 ms, one each: p50 is 500 ms, p99 is 990 ms.
    for (let ms = 1; ms <= 1000; ms++) counts[latencyBucket(ms)]!++;
    const p50 = percentileMs(counts, 0.5)!;
    const p99 = percentileMs(counts, 0.99)!;
    assert.ok(p50 > 500 / 1.26 && p50 < 500 * 1.26, `p50 ${p50}`);
    assert.ok(p99 > 990 / 1.26 && p99 < 990 * 1.26, `p99 ${p99}`);
  });

  it('has no percentile without a sample', () => {
    assert.equal(percentileMs(new Array<number>(LATENCY_BUCKETS).fill(0), 0.5), null);
  });
});
