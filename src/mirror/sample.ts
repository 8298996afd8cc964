/**
 * Which requests of a mirrored route are copied: `percent` of them, spread evenly and
 * deterministically (50 copies every second request, 10 every tenth), so that a small sample
 * stays representative over a short time and tests can count it exactly.
 */

/** A sampler for one route: true for the requests to copy. */
export function createSampler(percent: number): () => boolean {
  if (percent >= 100) return () => true;
  if (percent <= 0) return () => false;
  let credit = 0;
  return () => {
    credit += percent;
    if (credit < 100) return false;
    credit -= 100;
    return true;
  };
}
