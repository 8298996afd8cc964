/** The order of a weighted round-robin over targets (upstream/targets.ts, `balance: round-robin`). */

/**
 * nginx's smooth weighted round-robin, unrolled into one cycle: weights 5,1,1 give
 * a a b a c a a rather than a a a a a b c.
 */
export function smoothWeightedOrder(weights: readonly number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  const current = weights.map(() => 0);
  const order: number[] = [];
  for (let n = 0; n < total; n++) {
    let best = 0;
    for (let i = 0; i < weights.length; i++) {
      current[i]! += weights[i]!;
      if (current[i]! > current[best]!) best = i;
    }
    current[best]! -= total;
    order.push(best);
  }
  return order;
}
