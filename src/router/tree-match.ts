/**
 * Matching a path in a segment tree (./segment-tree.ts says how it is built and in what order it is
 * walked). This module holds the whole per-request walk, so that it runs without calls into other
 * modules but for the checks of a value found.
 */
import { isDotSegmentValue } from '../upstream/target-url.js';
import { safeRest } from './prefix-rest.js';
import { decodeReserved } from './request-path.js';
import type { PatternEdge, SegmentTree, TreeLeaf, TreeNode } from './tree-node.js';
import type { Match } from './types.js';

/** A parameter longer than this matches nothing (a guard against paths crafted to be slow). */
export const MAX_PARAM_LENGTH = 2048;

/** The values of the last successful walk, by position. */
const values: string[] = [];

/**
 * The name of a parameter of the route the last walk found whose decoded value is a dot-segment:
 * encoding it is not enough, as many backends decode `%2E%2E` before they normalise the path.
 */
function dotSegmentParam(leaf: TreeLeaf): string | undefined {
  const { names } = leaf;
  for (let i = 0; i < names.length; i++) if (isDotSegmentValue(values[i]!)) return names[i];
  return undefined;
}

const BAD_REST: Match = Object.freeze({ kind: 'bad-path' });

/**
 * The route of `tree` that takes `path`, or undefined: the routes without `*` first, then the
 * longest prefix. `raw` is where a prefix route's rest is cut from; `decode` says whether
 * parameter values still hold reserved escapes (./request-path.ts).
 */
export function matchTree(tree: SegmentTree, path: string, raw: string, decode: boolean): Match | undefined {
  const leaf = find(tree.root, path, 0, decode, 0);
  if (leaf !== undefined) {
    const bad = dotSegmentParam(leaf);
    if (bad !== undefined) return { kind: 'bad-parameter', param: bad };
    return { kind: 'found', entry: leaf.entry, params: leaf.makeParams(values) };
  }
  if (!tree.hasPrefix) return undefined;
  const prefix = findPrefix(tree.root, path, 0, decode, 0);
  return prefix === undefined ? undefined : prefixMatch(prefix, raw);
}

/** The named parameters as for any route, and `*`: the rest of the raw path, made safe. */
function prefixMatch(leaf: TreeLeaf, raw: string): Match {
  const bad = dotSegmentParam(leaf);
  if (bad !== undefined) return { kind: 'bad-parameter', param: bad };
  // The walk compared the decoded path; the rest is cut from the raw one, after the prefix's own
  // slashes (an encoded slash stays encoded in both, so they count the same slashes).
  let at = -1;
  for (let n = 0; n < leaf.slashes; n++) at = raw.indexOf('/', at + 1);
  const rest = safeRest(raw.slice(at + 1));
  if (rest === undefined) return BAD_REST;
  values[leaf.names.length] = rest;
  return { kind: 'found', entry: leaf.entry, params: leaf.makeParams(values) };
}

/** The route without `*` that takes all of `path` (from the `/` at `pos`), or undefined. */
function find(node: TreeNode, path: string, pos: number, decode: boolean, count: number): TreeLeaf | undefined {
  if (pos === path.length) return node.leaf;
  const start = pos + 1;
  const next = literalChild(node, path, start);
  if (next !== undefined) {
    const found = find(next, path, literalEnd, decode, count);
    if (found !== undefined) return found;
  }
  if (node.patterns === undefined && node.param === undefined) return undefined;
  let end = path.indexOf('/', start);
  if (end < 0) end = path.length;
  const segment = path.slice(start, end);
  if (node.patterns !== undefined) {
    for (const edge of node.patterns) {
      const n = matchPattern(edge, segment, decode, count);
      if (n < 0) continue;
      const found = find(edge.node, path, end, decode, n);
      if (found !== undefined) return found;
    }
  }
  if (node.param !== undefined && segment !== '' && segment.length <= MAX_PARAM_LENGTH) {
    values[count] = decode ? decodeReserved(segment) : segment;
    return find(node.param, path, end, decode, count + 1);
  }
  return undefined;
}

/** The longest prefix route that owns `path` (from the `/` at `pos`), or undefined. */
function findPrefix(node: TreeNode, path: string, pos: number, decode: boolean, count: number): TreeLeaf | undefined {
  if (pos === path.length) return undefined;
  const start = pos + 1;
  const next = literalChild(node, path, start);
  if (next !== undefined) {
    const found = findPrefix(next, path, literalEnd, decode, count);
    if (found !== undefined) return found;
  }
  // The rest starts after the `/` at pos: `/static/` is under `/static/*`, `/static` is not.
  if (node.patterns === undefined && node.param === undefined) return node.prefix;
  let end = path.indexOf('/', start);
  if (end < 0) end = path.length;
  const segment = path.slice(start, end);
  if (node.patterns !== undefined) {
    for (const edge of node.patterns) {
      const n = matchPattern(edge, segment, decode, count);
      if (n < 0) continue;
      const found = findPrefix(edge.node, path, end, decode, n);
      if (found !== undefined) return found;
    }
  }
  if (node.param !== undefined && segment !== '' && segment.length <= MAX_PARAM_LENGTH) {
    values[count] = decode ? decodeReserved(segment) : segment;
    const found = findPrefix(node.param, path, end, decode, count + 1);
    if (found !== undefined) return found;
  }
  return node.prefix;
}

/** Writes the captures of `edge` on `segment` from `values[count]`; the new count, or -1. */
function matchPattern(edge: PatternEdge, segment: string, decode: boolean, count: number): number {
  const value = decode ? decodeReserved(segment) : segment;
  if (value.length > edge.maxLength) return -1;
  const m = edge.regex.exec(value);
  if (m === null) return -1;
  for (let i = 1; i < m.length; i++) {
    const v = m[i];
    if (v === undefined || v === '' || v.length > MAX_PARAM_LENGTH) return -1;
    values[count++] = v;
  }
  return count;
}

/** Where the path stands after the edge `literalChild` last returned. */
let literalEnd = 0;

/**
 * The child of `node` whose literal edge (one segment or more) starts the path at `start` and ends
 * on a segment boundary, with `literalEnd` set after it; found without making a string of the path.
 */
function literalChild(node: TreeNode, path: string, start: number): TreeNode | undefined {
  let edges = node.fewEdges;
  if (edges === undefined) {
    if (node.byHash === undefined) return undefined;
    let end = path.indexOf('/', start);
    if (end < 0) end = path.length;
    edges = node.byHash.get(segmentHash(path, start, end));
    if (edges === undefined) return undefined;
  }
  for (let i = 0; i < edges.length; i += 2) {
    const literal = edges[i] as string;
    const end = start + literal.length;
    if (path.startsWith(literal, start) && (end === path.length || path.charCodeAt(end) === SLASH)) {
      literalEnd = end;
      return edges[i + 1] as TreeNode;
    }
  }
  return undefined;
}

const SLASH = 47;

/**
 * A small-integer hash of `text[start..end)`. A map keyed by it finds a literal segment among many
 * without slicing the path into a new string, whose own hash V8 computes anew for every request.
 */
export function segmentHash(text: string, start: number, end: number): number {
  let h = end - start;
  for (let i = start; i < end; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return h & 0x3fffffff;
}
