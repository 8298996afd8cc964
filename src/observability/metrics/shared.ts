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

// The label names are a type parameter, so `inc()` and `observe()` take exactly those labels.

/** A counter registered on `registry`, fed by events. */
export function counter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): Counter<L> {
  return new Counter({ registers: [registry], name, help, labelNames });
}

/** A gauge registered on `registry`, fed by events. */
export function gauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): Gauge<L> {
  return new Gauge({ registers: [registry], name, help, labelNames });
}

/** A histogram registered on `registry`, fed by events. */
export function histogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: number[],
): Histogram<L> {
  return new Histogram({ registers: [registry], name, help, labelNames, buckets });
}

/** A counter without labels whose owner keeps the count: `read()` gives it at each scrape. */
export function counterFrom(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    registers: [registry],
    name,
    help,
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/**
 * A gauge without labels read at each scrape; `aggregator` is how a cluster's workers' values
 * combine into one (prom-client's default is their sum).
 */
export function gaugeFrom(
  registry: Registry,
  name: string,
  help: string,
  read: () => number,
  aggregator: Aggregator = 'sum',
): void {
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
