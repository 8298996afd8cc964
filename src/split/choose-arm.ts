/**
 * Which arm of a split a request goes to.
 *
 * Without a sticky key: smooth weighted round robin (as nginx balances upstreams). Each pick adds
 * every arm's weight to its running score, takes the arm with the highest score and takes the
 * total off it. The sequence is deterministic and exact: over every run of `total` picks each arm
 * gets exactly its weight, and the picks of a small arm are spread evenly rather than bunched, so
 * a 90/10 split is 90/10 after a few dozen requests, not only on average.
 *
 * With a sticky key: weighted rendezvous hashing. Each arm scores the key as
 * `weight / -ln(u)`, where `u` in (0, 1) is a hash of the key and the arm's name, and the
 * highest score wins. A key lands on an arm with probability weight / total, the same key always
 * lands on the same arm while the weights stay, and a weight change moves only the keys that must
 * move: raising one arm's weight only takes keys to that arm, so going from 90/10 to 80/20 moves
 * an eighth of the first arm's clients to the second and no client the other way. Arms are named,
 * not numbered, in the hash: reordering the list moves nobody.
 */

/** An arm as the chooser sees it. */
export interface WeightedArm {
  readonly name: string;
  readonly weight: number;
}

/** Picks an arm index for each request; one per route and configuration. */
export interface ArmChooser {
  /** The next arm by weight (no key, or no sticky split). */
  next(): number;
  /** The arm that `key` sticks to. */
  forKey(key: string): number;
}

/** Makes the chooser of one split (once, when the route's pipeline is built). */
export function createArmChooser(arms: readonly WeightedArm[]): ArmChooser {
  const weights = arms.map((a) => a.weight);
  const total = weights.reduce((s, w) => s + w, 0);
  const current = weights.map(() => 0);
  const seeds = arms.map((a) => fnv1a(a.name, FNV_OFFSET));
  return {
    next() {
      let best = 0;
      for (let i = 0; i < current.length; i++) {
        current[i]! += weights[i]!;
        if (current[i]! > current[best]!) best = i;
      }
      current[best]! -= total;
      return best;
    },
    forKey(key) {
      const h = fnv1a(key, FNV_OFFSET);
      let best = 0;
      let bestScore = -1;
      for (let i = 0; i < weights.length; i++) {
        const w = weights[i]!;
        if (w === 0) continue;
        // (x + 0.5) / 2^32 is in (0, 1): the logarithm is finite and negative.
        const u = (mix(h ^ seeds[i]!) + 0.5) / 4294967296;
        const score = w / -Math.log(u);
        if (score > bestScore) {
          bestScore = score;
          best = i;
        }
      }
      return best;
    },
  };
}

const FNV_OFFSET = 0x811c9dc5;

/** FNV-1a over the UTF-16 code units of `text`, 32 bits. */
function fnv1a(text: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The murmur3 finaliser: every input bit moves every output bit, so nearby keys spread out. */
function mix(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
