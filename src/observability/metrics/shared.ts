/**
 * What more than one source module uses: the route label, the latency buckets, and the helpers
 * that declare a series on the registry.
 */
import { Counter, Gauge, Histogram, type Aggregator, type Registry } from 'prom-client';

/** Seconds; dense at the low end, where a gateway's own latency lives. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The route label of a request that matched no route. */
export const UNMATCHED = 'unmatched';

/** The route template of a route id (`GET /users/{id}` -> `/users/{id}`). */
export function routeLabel(routeId: string | undefined): string {
  if (routeId === undefined) return UNMATCHED;
  const space = routeId.indexOf(' ');
  return space < 0 ? routeId : routeId.slice(space + 1);
}

/**
 * A series declared as one row of data: its name, help text and label names. A module lists its
 * series as a table of rows, one a line, and the helpers below register them; the label names are
 * a type parameter, so `inc()`, `set()` and `observe()` take exactly those labels.
 */
export type SeriesRow<L extends string = string> = readonly [name: string, help: string, labelNames: readonly L[]];

/** A series whose owner keeps the value, read at each scrape: name, help, the reading, its type. */
export type ScrapedRow = readonly [name: string, help: string, read: () => number, type: 'counter' | 'gauge'];

type LabelsOf<R> = R extends SeriesRow<infer L> ? L : never;
type Declared<T, S extends 'counter' | 'gauge'> = {
  readonly [K in keyof T]: S extends 'counter' ? Counter<LabelsOf<T[K]>> : Gauge<LabelsOf<T[K]>>;
};

/** One counter per row of `rows`, registered on `registry` and fed by events, by the rows' keys. */
export function counters<const T extends Readonly<Record<string, SeriesRow>>>(
  registry: Registry,
  rows: T,
): Declared<T, 'counter'> {
  return byKey(rows, ([name, help, labelNames]) => new Counter({ registers: [registry], name, help, labelNames }));
}

/** One gauge per row of `rows`, registered on `registry` and fed by events, by the rows' keys. */
export function gauges<const T extends Readonly<Record<string, SeriesRow>>>(
  registry: Registry,
  rows: T,
): Declared<T, 'gauge'> {
  return byKey(rows, ([name, help, labelNames]) => new Gauge({ registers: [registry], name, help, labelNames }));
}

/** A histogram registered on `registry`, fed by events. */
export function histogram<L extends string>(
  registry: Registry,
  [name, help, labelNames]: SeriesRow<L>,
  buckets: number[],
): Histogram<L> {
  return new Histogram({ registers: [registry], name, help, labelNames, buckets });
}

function byKey<T extends Readonly<Record<string, SeriesRow>>, S>(rows: T, make: (row: SeriesRow) => S): never {
  const made: Record<string, S> = {};
  for (const [key, row] of Object.entries(rows)) made[key] = make(row);
  return made as never;
}

/**
 * Series without labels whose owners keep the values, read at each scrape. A gauge's `aggregator`
 * is how a cluster's workers' values combine into one (prom-client's default is their sum).
 */
export function scraped(registry: Registry, rows: readonly ScrapedRow[], aggregator: Aggregator = 'sum'): void {
  for (const [name, help, read, type] of rows) {
    if (type === 'counter')
      new Counter({
        registers: [registry],
        name,
        help,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    else
      new Gauge({
        registers: [registry],
        name,
        help,
        aggregator,
        collect() {
          this.set(read());
        },
      });
  }
}

/**
 * One series per item of `items()` (a target, an admission limit), rebuilt at each scrape: the
 * owner keeps the values, and `labelsOf` names each item.
 */
export function scrapedPerItem<T, L extends string>(
  registry: Registry,
  items: () => Iterable<T>,
  labelsOf: (item: T) => Record<L, string>,
  labelNames: readonly L[],
  s: { name: string; help: string; pick: (item: T) => number; type: 'counter' | 'gauge' },
): void {
  const { pick } = s;
  const config = {
    registers: [registry],
    name: s.name,
    help: s.help,
    labelNames,
    collect(this: Counter<L> | Gauge<L>) {
      this.reset();
      for (const item of items()) {
        const labels = labelsOf(item) as Partial<Record<L, string>>;
        if (this instanceof Gauge) this.set(labels, pick(item));
        else this.inc(labels, pick(item));
      }
    },
  };
  if (s.type === 'counter') new Counter(config);
  else new Gauge(config);
}
