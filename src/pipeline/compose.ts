/**
 * Wraps `end` in `layers`, first layer outermost. Done once per route at config load, for the
 * route's HTTP pipeline (`Layer`s around a `Step`) and its upgrade pipeline alike.
 */
export const compose = <S>(layers: readonly ((next: S) => S)[], end: S): S =>
  layers.reduceRight<S>((next, wrap) => wrap(next), end);
