/**
 * Per-request histograms without prom-client on the hot path.
 *
 * Design note. prom-client hashes the label object on every `observe()` (about 1 microsecond per
 * call). Here a caller keeps a `Series` per label set and an observation is a bucket search and
 * three additions. A per-request caller finds its series by three label values (`seriesOf`) in
 * nested maps rather than by one key string: a string made per request would be hashed on every
 * look-up, while a route id or an origin from the configuration, or a method from node's parser,
 * is a string V8 hashes once and a status class a small integer. prom-client reads the series only at
 * scrape time, through the small metric interface its Registry calls (`get()`), so the text
 * format, cluster aggregation (every label, including `le`, in `labels`) and HELP/TYPE lines are
 * prom-client's. One histogram also serves as a counter of the same label set (its count).
 */
import type { Metric, Registry } from 'prom-client';

export interface Series {
  readonly labels: Readonly<Record<string, string>>;
  /** Observations per bucket, not cumulative (the last slot is +Inf). */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

export interface SeriesHistogram {
  /** The series of `key`, created with `labels()` the first time. */
  series(key: string, labels: () => Record<string, string>): Series;
  /** The series of the label values `a`, `b` and `c`, created with `labels()` the first time. */
  seriesOf(a: string | number, b: string, c: string, labels: () => Record<string, string>): Series;
  observe(series: Series, value: number): void;
}

/** Registers a histogram (and optionally a counter of its observations) on `registry`. */
export function createSeriesHistogram(
  registry: Registry,
  options: { name: string; help: string; buckets: readonly number[]; counter?: { name: string; help: string } },
): SeriesHistogram {
  const { name, help, buckets } = options;
  const all = new Map<string, Series>();
  const histogramValues = (): MetricValue[] => {
    const values: MetricValue[] = [];
    for (const s of all.values()) {
      let acc = 0;
      for (let i = 0; i < buckets.length; i++) {
        acc += s.counts[i]!;
        values.push({ labels: { le: buckets[i]!, ...s.labels }, value: acc, metricName: `${name}_bucket` });
      }
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${name}_bucket` });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${name}_count` });
    }
    return values;
  };
  register(registry, { name, help, type: 'histogram', values: histogramValues });
  const counter = options.counter;
  if (counter !== undefined) {
    register(registry, {
      name: counter.name,
      help: counter.help,
      type: 'counter',
      values: () => [...all.values()].map((s) => ({ labels: { ...s.labels }, value: s.count })),
    });
  }
  const created = (key: string, labels: () => Record<string, string>): Series => {
    const s = { labels: labels(), counts: new Float64Array(buckets.length + 1), sum: 0, count: 0 };
    all.set(key, s);
    return s;
  };
  const nested = new Map<string | number, Map<string, Map<string, Series>>>();
  return {
    series: (key, labels) => all.get(key) ?? created(key, labels),
    seriesOf(a, b, c, labels) {
      let byB = nested.get(a);
      if (byB === undefined) nested.set(a, (byB = new Map()));
      let byC = byB.get(b);
      if (byC === undefined) byB.set(b, (byC = new Map()));
      let s = byC.get(c);
      // The key keeps the three values apart in the one list a scrape reads.
      if (s === undefined) byC.set(c, (s = created(`${a}\u0000${b}\u0000${c}`, labels)));
      return s;
    },
    observe(s, value) {
      let i = 0;
      while (i < buckets.length && value > buckets[i]!) i++;
      s.counts[i]!++;
      s.sum += value;
      s.count++;
    },
  };
}

function register(
  registry: Registry,
  m: { name: string; help: string; type: 'histogram' | 'counter'; values: () => MetricValue[] },
): void {
  const metric = {
    name: m.name,
    help: m.help,
    type: m.type,
    aggregator: 'sum',
    get: () => Promise.resolve({ name: m.name, help: m.help, type: m.type, aggregator: 'sum', values: m.values() }),
    reset: () => {},
  };
  registry.registerMetric(metric as unknown as Metric);
}
