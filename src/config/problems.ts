/**
 * Config problems are data, not exceptions: every check appends to one list, the whole list is
 * reported at once (`FILE:LINE:COL: message`), and only then does the gateway refuse to start.
 */
import type { Problem } from './types.js';

export type { Problem };

/** Where a check reports a problem: the key path (located later) and the message. */
export type AddProblem = (path: readonly (string | number)[], message: string, hint?: string) => void;

/** Longest message or hint printed: messages quote keys and values from the file, which may be huge. */
const MAX_TEXT = 500;

/** `FILE:LINE:COL: message (hint)`, the format of `portico check` (docs/design-decisions.md). */
export function formatProblem(p: Problem): string {
  return `${p.file}:${p.line}:${p.col}: ${p.severity ? `${p.severity}: ` : ''}${clip(p.message)}${p.hint ? ` (${clip(p.hint)})` : ''}`;
}

function clip(text: string): string {
  return text.length <= MAX_TEXT ? text : `${text.slice(0, MAX_TEXT - 3)}...`;
}

/**
 * Edit distance with transpositions (optimal string alignment): insert, delete, replace or swap
 * two neighbours costs 1, so `tga` is one edit from `tag` as a typist sees it.
 */
export function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      row.push(d);
    }
    before = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/** The closest candidate within a third of the word's length (case-insensitive), if any. */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    // The distance is at least the difference in length: a long hostile key costs nothing.
    if (Math.abs(c.length - word.length) >= bestDistance) continue;
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}
