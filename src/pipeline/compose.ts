/** Wraps `end` in `layers`, first layer outermost. Done once per route at config load. */
export const compose = <S>(layers: readonly ((next: S) => S)[], end: S): S =>
  layers.reduceRight<S>((next, wrap) => wrap(next), end);
