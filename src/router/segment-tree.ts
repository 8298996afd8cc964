/**
 * The routes of one host group whose path is not all literal text, every method in one tree: one
 * level per path segment, built once per configuration. Design note:
 *
 * - A node's children are tried in a fixed order, backtracking when a branch ends nowhere: the
 *   literal segment (compared in place among a few, else found by a hash of the segment), then the
 *   segments that mix text and parameters (`v{version}`, `{name}.{ext}`: a regex each, in the
 *   order of the file), then a whole-segment parameter. The first route found this way is the one
 *   with the most literal segments, counted from the left (docs/routing.md "Precedence").
 * - A node holds the route of each method that ends there, and the prefix route (`/static/*`) of
 *   each method that owns the paths below it, with the sets of those methods as bits: a walk for
 *   one method passes over the others' routes, and learns on its way the methods that would take
 *   the path (the `Allow` of a 405) without a walk per method.
 * - Prefix routes are candidates only when no route without `*` takes the path. The walk remembers
 *   the first one it meets after a node's children (the longest, a literal segment before a
 *   parameter), so no second walk looks for it.
 * - The walk (./tree-match.ts) keeps where each parameter's value is, not the value: strings are
 *   made only for the route found.
 */
import { runWhole, type Work } from '../config/sliced-work.js';
import { METHOD_COUNT } from './method-set.js';
import { paramsMaker, type ValueSource } from './params-maker.js';
import { MAX_PARAM_LENGTH } from './tree-match.js';
import { segmentHash } from './path-segments.js';
import { TreeNode, type PatternEdge, type SegmentTree, type TreeLeaf } from './tree-node.js';
import type { RouteEntry } from './types.js';

export type { SegmentTree };

/** At most this many literal edges are compared one by one; more are found by a hash of the segment. */
const FEW = 4;

/** An empty tree, for `addToTree` and then `finishTree`. */
export function createSegmentTree(): SegmentTree {
  return { root: new TreeNode(), hasPrefix: false };
}

/**
 * Adds the route of `entry` for the method of index `method`, whose client path is `clientPath`
 * (`/api/users/{id}`, `/api/static/*`). An all-literal path belongs in the exact map, not here. A
 * second route with the same method and pattern replaces nothing: the first one stays
 * (config/route-conflicts.ts refuses the second).
 */
export function addToTree(
  tree: SegmentTree,
  method: number,
  entry: RouteEntry,
  clientPath: string,
  isPrefix: boolean,
): void {
  const segments = clientPath.slice(1).split('/');
  if (isPrefix) segments.pop();
  const names: string[] = [];
  const sources: ValueSource[] = [];
  let node = tree.root;
  for (const segment of segments) node = child(node, segment, names, sources);
  const leaf: TreeLeaf = {
    entry,
    names,
    slashes: segments.length + 1,
    makeParams: paramsMaker(names, sources, isPrefix),
  };
  if (isPrefix) {
    node.prefixes ??= new Array<TreeLeaf | null>(METHOD_COUNT).fill(null);
    node.prefixes[method] ??= leaf;
    node.prefixMethods |= 1 << method;
    tree.hasPrefix = true;
  } else {
    node.leaves ??= new Array<TreeLeaf | null>(METHOD_COUNT).fill(null);
    node.leaves[method] ??= leaf;
    node.leafMethods |= 1 << method;
  }
}

/**
 * Called once the tree is complete: a chain of nodes that only lead on to one literal segment
 * becomes one edge (`items/latest`), compared at once; a node with many edges finds them by the
 * hash of their first segment.
 */
export function finishTree(tree: SegmentTree): void {
  runWhole(finishTreeWork(tree));
}

/**
 * `finishTree` as interruptible work (config/sliced-work.ts), after each node. One loop over a
 * stack of the nodes still to finish: a generator per node, delegated to at every level, would
 * allocate per node and per level what a reload of many routes then has to collect. A node is
 * finished before the nodes below it, which it may join into its edges unfinished.
 */
export function* finishTreeWork(tree: SegmentTree): Work<void> {
  const pending: TreeNode[] = [tree.root];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    finishNode(node, pending);
    yield;
  }
}

/** Joins `node`'s passages into its edges and indexes them; the nodes it leads to join `pending`. */
function finishNode(node: TreeNode, pending: TreeNode[]): void {
  if (node.statics !== null) {
    const kids: TreeNode[] = [];
    node.statics.forEach((next, literal) => {
      let text = literal;
      let to = next;
      while (isPassage(to)) {
        const [onward, after] = to.statics!.entries().next().value!;
        text += '/' + onward;
        to = after;
      }
      to.edge = text;
      to.edgeCodes = Array.from(text, (c) => c.charCodeAt(0));
      kids.push(to);
    });
    node.statics = null;
    if (kids.length <= FEW) node.kids = kids;
    else {
      // A power of two at least twice the edges: most buckets hold one edge, and a mask picks one.
      let size = 8;
      while (size < kids.length * 2) size *= 2;
      const table: (TreeNode[] | null)[] = new Array<TreeNode[] | null>(size).fill(null);
      for (const kid of kids) {
        const at = segmentHash(kid.edge, 0) & (size - 1);
        (table[at] ??= []).push(kid);
      }
      node.byHash = table;
    }
    for (const kid of kids) pending.push(kid);
  }
  for (const e of node.patterns ?? []) pending.push(e.node);
  if (node.param !== null) pending.push(node.param);
}

/** A node that only leads on to one literal segment: no route ends or forks there. */
function isPassage(node: TreeNode): boolean {
  return (
    node.leafMethods === 0 &&
    node.prefixMethods === 0 &&
    node.patterns === null &&
    node.param === null &&
    node.statics?.size === 1
  );
}

const WHOLE_PARAM = /^\{([^}]+)\}$/;

/**
 * The child of `node` for one route segment, made if new; the segment's parameter names join
 * `names`, and where their values will come from `sources`.
 */
function child(node: TreeNode, segment: string, names: string[], sources: ValueSource[]): TreeNode {
  if (!segment.includes('{')) {
    // The path is compared decoded but for reserved escapes, `%25` among them.
    const literal = segment.replaceAll('%', '%25');
    node.statics ??= new Map();
    let next = node.statics.get(literal);
    if (next === undefined) node.statics.set(literal, (next = new TreeNode()));
    return next;
  }
  const whole = WHOLE_PARAM.exec(segment);
  if (whole !== null) {
    names.push(whole[1]!);
    sources.push('segment');
    return (node.param ??= new TreeNode());
  }
  const pattern = compilePattern(segment);
  names.push(...pattern.names);
  sources.push(...pattern.names.map((): ValueSource => 'capture'));
  const { names: _, ...shape } = pattern;
  node.patterns ??= [];
  let edge = node.patterns.find((e) => e.key === pattern.key);
  if (edge === undefined) {
    edge = { ...shape, node: new TreeNode() };
    node.patterns.push(edge);
    node.patterns.sort(byPatternOrder);
  }
  return edge.node;
}

/**
 * A segment mixing text and parameters as a regex over the decoded segment. The first parameter
 * takes as little as it can; each later one takes no text equal to the literal before it, so that
 * `{name}.{ext}` reads `a.b.pdf` as `a.b` and `pdf`, the extension after the last dot.
 */
function compilePattern(segment: string): {
  key: string;
  regex: RegExp;
  maxLength: number;
  lead: number;
  suffix: string;
  names: string[];
} {
  const names: string[] = [];
  let source = '';
  let key = '';
  let literalLength = 0;
  let before: string | undefined;
  const parts = segment.split(/(\{[^}]+\})/);
  for (const part of parts) {
    if (part === '') continue;
    if (part.startsWith('{') && part.endsWith('}')) {
      names.push(part.slice(1, -1));
      key += '{}';
      source += before === undefined ? '(.*?)' : `(${before}|(?:(?!${before}).)*)`;
    } else {
      const literal = escapeRegExp(part.replaceAll('%', '%25'));
      source += literal;
      key += part;
      literalLength += part.length;
      if (names.length > 0) before = literal;
    }
  }
  const maxLength = names.length * MAX_PARAM_LENGTH + literalLength;
  const suffix = segment.slice(segment.lastIndexOf('}') + 1);
  return { key, regex: new RegExp(`^${source}$`), maxLength, lead: segment.indexOf('{'), suffix, names };
}

/**
 * The order a node tries its mixed segments in: a longer literal start first (as a literal segment
 * before a parameter), then a segment ending in text before one ending in a parameter, and the
 * longer of two text endings when one ends the other (`{name}.tar.gz` before `{name}.gz`); else
 * the order of the file (the sort is stable).
 */
function byPatternOrder(a: PatternEdge, b: PatternEdge): number {
  if (a.lead !== b.lead) return b.lead - a.lead;
  if (a.suffix === '' || b.suffix === '') return a.suffix === '' ? (b.suffix === '' ? 0 : 1) : -1;
  if (a.suffix !== b.suffix && a.suffix.endsWith(b.suffix)) return -1;
  if (a.suffix !== b.suffix && b.suffix.endsWith(a.suffix)) return 1;
  return 0;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
