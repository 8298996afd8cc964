/**
 * Reading a request path segment by segment in place, for the tree walk (./tree-match.ts): where a
 * segment ends, whether it holds a `.`, its hash, and whether a literal edge starts at it. No
 * string is made of a segment. Every code is read with charCodeAt, which checks the string's
 * representation each time: each function reads a code once where it can.
 */

const SLASH = 47;
const DOT = 46;

/** What the last segmentEnd saw besides the end (matching is synchronous: one state for all). */
export const scan = {
  /** Whether the segment holds a `.` (else its value cannot be a dot-segment). */
  dot: false,
};

/** A segment this long or shorter is read code by code; a longer one's end is searched. */
const SHORT_SEGMENT = 16;

/** The end of the segment at `start`: the next `/`, or the path's end; `scan.dot` says if it holds a `.`. */
export function segmentEnd(path: string, start: number): number {
  // Code by code for a short segment (most ids and names): indexOf's call costs more than a few
  // codes, and less than many.
  const limit = start + SHORT_SEGMENT < path.length ? start + SHORT_SEGMENT : path.length;
  let dot = false;
  for (let i = start; i < limit; i++) {
    const c = path.charCodeAt(i);
    if (c === SLASH) {
      scan.dot = dot;
      return i;
    }
    if (c === DOT) dot = true;
  }
  let end = limit;
  if (limit < path.length) {
    end = path.indexOf('/', limit);
    if (end < 0) end = path.length;
    if (!dot) {
      const at = path.indexOf('.', limit);
      dot = at >= 0 && at < end;
    }
  }
  scan.dot = dot;
  return end;
}

/**
 * Whether `edge` is the text of `path` at `start`, ending the path or followed by a `/`. Compared
 * code by code: startsWith at an offset costs more than the few codes of a segment.
 */
export function startsEdge(path: string, start: number, edge: readonly number[]): boolean {
  const n = edge.length;
  const end = start + n;
  if (end > path.length || (end < path.length && path.charCodeAt(end) !== SLASH)) return false;
  for (let i = 0; i < n; i++) if (path.charCodeAt(start + i) !== edge[i]) return false;
  return true;
}

/**
 * A small-integer hash of the segment of `text` at `start`: of its first codes (up to
 * SHORT_SEGMENT), read until a `/`. A table indexed by it finds a literal segment among many
 * without slicing the path into a new string, whose own hash V8 computes anew for every request,
 * and without searching for the segment's end: segments that share a hash share a bucket,
 * compared one by one.
 */
export function segmentHash(text: string, start: number): number {
  const limit = start + SHORT_SEGMENT < text.length ? start + SHORT_SEGMENT : text.length;
  let hash = 0;
  for (let i = start; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (c === SLASH) break;
    hash = (hash * 31 + c) | 0;
  }
  return hash & 0x3fffffff;
}
