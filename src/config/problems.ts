/**
 * Config problems are data, not exceptions: every check appends to one list, the whole list is
 * reported at once (`FILE:LINE:COL: message`), and only then does the gateway refuse to start.
 */
export interface Problem {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly message: string;
  readonly hint?: string;
}

/** `FILE:LINE:COL: message (hint)`, the format of `portico check` (DECISIONS.md). */
export function formatProblem(p: Problem): string {
  return `${p.file}:${p.line}:${p.col}: ${p.message}${p.hint ? ` (${p.hint})` : ''}`;
}

/** Thrown once, after every problem of a file has been collected. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly Problem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'ConfigError';
  }
}

/** Levenshtein distance, for "did you mean" hints on misspelt keys and values. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(up + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** The closest candidate within a third of the word's length (case-insensitive), if any. */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}
