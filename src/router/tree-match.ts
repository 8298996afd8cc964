/**
 * Matching a path in a segment tree (./segment-tree.ts says how it is built and in what order it is
 * walked). This module holds the whole per-request walk: one walk by index over the path, no
 * string made of a segment but a value of the route found, no object made but its params and its
 * match. Matching is synchronous, so the walk's scratch state lives here, shared by every table.
 */
import { isDotSegmentValue } from '../upstream/target-url.js';
import { isPlainRest, safeRest } from './prefix-rest.js';
import { decodeReserved } from './request-path.js';
import { scan, segmentEnd, segmentHash, startsEdge } from './path-segments.js';
import type { PatternEdge, SegmentTree, TreeLeaf, TreeNode } from './tree-node.js';
import type { Match } from './types.js';

/** A parameter longer than this matches nothing (a guard against paths crafted to be slow). */
export const MAX_PARAM_LENGTH = 2048;

/** The state of the walk, in one object of one shape (its fields read as plain loads). */
const w = {
  /** The bit of the method walked for (./method-set.ts); 0 for a method no route has. */
  bit: 0,
  /** The index of that method. */
  method: 0,
  /** Whether parameter values still hold reserved escapes to decode. */
  decoding: false,
  /** The methods whose routes would take the path, gathered on the walk (the `Allow` of a miss). */
  methods: 0,
  /** The prefix route remembered on the walk, and where its rest starts. */
  prefixLeaf: null as TreeLeaf | null,
  prefixAt: 0,
};

/**
 * Where each parameter value of the current branch is in the path, by position: `starts[i]` to
 * `ends[i]`, or `starts[i] === -1` with the value in `captured[i]` (a mixed segment's capture).
 */
const starts: number[] = [0, 0, 0, 0, 0, 0, 0, 0];
const ends: number[] = [0, 0, 0, 0, 0, 0, 0, 0];
const captured: string[] = ['', '', '', '', '', '', '', ''];
/** 1 where the value may be a dot-segment (it holds a `.`, or is a capture), else 0. */
const dotted: number[] = [0, 0, 0, 0, 0, 0, 0, 0];

/** The values of the prefix route remembered (copied from those of the walk). */
const prefixStarts: number[] = [0, 0, 0, 0, 0, 0, 0, 0];
const prefixEnds: number[] = [0, 0, 0, 0, 0, 0, 0, 0];
const prefixCaptured: string[] = ['', '', '', '', '', '', '', ''];
const prefixDotted: number[] = [0, 0, 0, 0, 0, 0, 0, 0];

const BAD_REST: Match = Object.freeze({ kind: 'bad-path' });

/** The result of the last matchTree that returned undefined: the methods that would take the path. */
export function missedMethods(): number {
  return w.methods;
}

/**
 * The route of `tree` for the method of index `index` (bit `methodBit`) that takes `path`, or
 * undefined (then missedMethods() says which methods would): the routes without `*` first, then
 * the longest prefix. `raw` is where a prefix route's rest is cut from; `decode` says whether
 * parameter values still hold reserved escapes (./request-path.ts).
 */
export function matchTree(
  tree: SegmentTree,
  index: number,
  methodBit: number,
  path: string,
  raw: string,
  decode: boolean,
): Match | undefined {
  w.method = index;
  w.bit = methodBit;
  w.methods = 0;
  w.decoding = decode;
  w.prefixLeaf = null;
  const leaf = walk(tree.root, path, 0, 0);
  if (leaf !== null) return found(leaf, path);
  return w.prefixLeaf === null ? undefined : prefixMatch(w.prefixLeaf, path, raw);
}

/**
 * The route without `*` of the walked method that takes all of `path` from the `/` at `pos`, or
 * null; on the way, the first prefix route met after a node's children is remembered, and the
 * methods of the routes that would take the path are gathered.
 */
function walk(node: TreeNode, path: string, pos: number, count: number): TreeLeaf | null {
  // A branch with nothing to come back to is followed in this loop, not by a call: most paths
  // take no other branch than the first.
  for (;;) {
    if (pos === path.length) {
      if ((node.leafMethods & w.bit) !== 0) return node.leaves![w.method]!;
      w.methods |= node.leafMethods;
      return null;
    }
    const start = pos + 1;
    const next =
      node.kids !== null
        ? fewChild(node.kids, path, start)
        : node.byHash !== null
          ? hashedChild(node.byHash, path, start)
          : null;
    const patterns = node.patterns;
    const param = node.param;
    if (next !== null) {
      if (patterns === null && param === null && node.prefixMethods === 0) {
        node = next;
        pos = start + next.edge.length;
        continue;
      }
      const leaf = walk(next, path, start + next.edge.length, count);
      if (leaf !== null) return leaf;
    }
    if (patterns !== null || param !== null) {
      const end = segmentEnd(path, start);
      if (patterns !== null) {
        const leaf = walkPatterns(patterns, path, start, end, count);
        if (leaf !== null) return leaf;
      }
      if (param !== null && end > start && end - start <= MAX_PARAM_LENGTH) {
        starts[count] = start;
        ends[count] = end;
        dotted[count] = scan.dot ? 1 : 0;
        if (node.prefixMethods === 0) {
          node = param;
          pos = end;
          count++;
          continue;
        }
        const leaf = walk(param, path, end, count + 1);
        if (leaf !== null) return leaf;
      }
    }
    // The rest starts after the `/` at pos: `/static/` is under `/static/*`, `/static` is not.
    if (node.prefixMethods !== 0) remember(node, pos, count);
    return null;
  }
}

/** A node's prefix route for the walked method, kept if it is the first met; its methods gathered. */
function remember(node: TreeNode, pos: number, count: number): void {
  w.methods |= node.prefixMethods;
  if ((node.prefixMethods & w.bit) === 0 || w.prefixLeaf !== null) return;
  w.prefixLeaf = node.prefixes![w.method]!;
  w.prefixAt = pos + 1;
  for (let i = 0; i < count; i++) {
    prefixStarts[i] = starts[i]!;
    prefixEnds[i] = ends[i]!;
    prefixCaptured[i] = captured[i]!;
    prefixDotted[i] = dotted[i]!;
  }
}

/** The mixed segments of a node, tried in order on the segment `start..end`. */
function walkPatterns(
  edges: readonly PatternEdge[],
  path: string,
  start: number,
  end: number,
  count: number,
): TreeLeaf | null {
  // Only here is a segment made a string: the regexes read it decoded.
  const segment = path.slice(start, end);
  for (let i = 0; i < edges.length; i++) {
    const edge = edges[i]!;
    const n = matchPattern(edge, segment, count);
    if (n < 0) continue;
    const leaf = walk(edge.node, path, end, n);
    if (leaf !== null) return leaf;
  }
  return null;
}

/** Writes the captures of `edge` on `segment` from `count`; the new count, or -1. */
function matchPattern(edge: PatternEdge, segment: string, count: number): number {
  const value = w.decoding ? decodeReserved(segment) : segment;
  if (value.length > edge.maxLength) return -1;
  const m = edge.regex.exec(value);
  if (m === null) return -1;
  for (let i = 1; i < m.length; i++) {
    const v = m[i];
    if (v === undefined || v === '' || v.length > MAX_PARAM_LENGTH) return -1;
    starts[count] = -1;
    dotted[count] = 1;
    captured[count++] = v;
  }
  return count;
}

/** The match of a route without `*` found by the walk. */
function found(leaf: TreeLeaf, path: string): Match {
  const params = leaf.makeParams(path, starts, ends, captured, dotted, w.decoding, '');
  // The maker refused a value, so one of them is bad.
  if (params === null) return { kind: 'bad-parameter', param: badParameter(leaf, path, starts, ends, captured)! };
  return { kind: 'found', entry: leaf.entry, params };
}

/** The named parameters as for any route, and `*`: the rest of the raw path, made safe. */
function prefixMatch(leaf: TreeLeaf, path: string, raw: string): Match {
  // The walk compared the decoded path; the rest is cut from the raw one, after the prefix's own
  // slashes (an encoded slash stays encoded in both, so they count the same slashes).
  let at = w.prefixAt;
  if (raw !== path) {
    at = 0;
    for (let n = 0; n < leaf.slashes; n++) at = raw.indexOf('/', at) + 1;
  }
  const rest = isPlainRest(raw, at) ? raw.slice(at) : safeRest(raw.slice(at));
  const params =
    rest === undefined
      ? null
      : leaf.makeParams(path, prefixStarts, prefixEnds, prefixCaptured, prefixDotted, w.decoding, rest);
  if (params !== null) return { kind: 'found', entry: leaf.entry, params };
  // A bad parameter is reported before a bad rest, whichever the maker met.
  const bad = badParameter(leaf, path, prefixStarts, prefixEnds, prefixCaptured);
  return bad === undefined ? BAD_REST : { kind: 'bad-parameter', param: bad };
}

/**
 * The name of `leaf`'s first parameter whose decoded value is a dot-segment, refused: encoding it
 * is not enough, as many backends decode `%2E%2E` before they normalise the path. Off the hot
 * path: called once the route's maker has refused a value (./params-maker.ts).
 */
function badParameter(
  leaf: TreeLeaf,
  path: string,
  from: readonly number[],
  to: readonly number[],
  texts: readonly string[],
): string | undefined {
  const { names } = leaf;
  for (let i = 0; i < names.length; i++) {
    const at = from[i]!;
    let value: string;
    if (at < 0) value = texts[i]!;
    else {
      value = path.slice(at, to[i]);
      if (w.decoding) value = decodeReserved(value);
    }
    if (isDotSegmentValue(value)) return names[i];
  }
  return undefined;
}

/** The child among a few literal edges that starts the path at `start` on a segment boundary. */
function fewChild(kids: readonly TreeNode[], path: string, start: number): TreeNode | null {
  for (let i = 0; i < kids.length; i++) {
    const kid = kids[i]!;
    if (startsEdge(path, start, kid.edgeCodes)) return kid;
  }
  return null;
}

/** The child among many literal edges, found by the hash of the segment at `start`. */
function hashedChild(byHash: readonly (TreeNode[] | null)[], path: string, start: number): TreeNode | null {
  const bucket = byHash[segmentHash(path, start) & (byHash.length - 1)]!;
  if (bucket === null) return null;
  return fewChild(bucket, path, start);
}
