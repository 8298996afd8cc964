/**
 * The routes of one method and one host group whose path is not all literal text: a tree with one
 * level per path segment, built once per configuration. Design note:
 *
 * - A node's children are tried in a fixed order, backtracking when a branch ends nowhere: the
 *   literal segment (compared in place, or found by a hash of the segment among many), then the segments that mix text and parameters
 *   (`v{version}`, `{name}.{ext}`: a regex each, in the order of the file), then a whole-segment
 *   parameter. The first route found this way is the one with the most literal segments, counted
 *   from the left (docs/routing.md "Precedence").
 * - Prefix routes (`/static/*`) hang on the node of their last segment. They are looked for only
 *   when no route without `*` takes the path, by a second walk in the same order that tries a
 *   node's prefix after its children: the longest prefix wins, a literal segment before a
 *   parameter.
 * - Parameter values are written into one scratch array by position while walking; the params
 *   object is made only for the route found. Matching is synchronous, so one array serves every
 *   table.
 */
import { MAX_PARAM_LENGTH, segmentHash } from './tree-match.js';
import type { PatternEdge, SegmentTree, TreeLeaf, TreeNode } from './tree-node.js';
import type { RouteEntry } from './types.js';

export type { SegmentTree };

/** At most this many literal edges are compared one by one; more are found by a hash of the segment. */
const FEW = 4;

/** An empty tree, for `addToTree` and then `finishTree`. */
export function createSegmentTree(): SegmentTree {
  return { root: newNode(), hasPrefix: false };
}

/**
 * Adds the route of `entry`, whose client path is `clientPath` (`/api/users/{id}`, `/api/static/*`).
 * An all-literal path belongs in the exact map, not here. A second route with the same pattern
 * replaces nothing: the first one stays (config/route-conflicts.ts refuses the second).
 */
export function addToTree(tree: SegmentTree, entry: RouteEntry, clientPath: string, isPrefix: boolean): void {
  const segments = clientPath.slice(1).split('/');
  if (isPrefix) segments.pop();
  const names: string[] = [];
  let node = tree.root;
  for (const segment of segments) node = child(node, segment, names);
  const leaf: TreeLeaf = {
    entry,
    names,
    slashes: segments.length + 1,
    makeParams: paramsMaker(isPrefix ? [...names, '*'] : names),
  };
  if (isPrefix) {
    node.prefix ??= leaf;
    tree.hasPrefix = true;
  } else node.leaf ??= leaf;
}

/**
 * A function making the params object of `names` from the walk's values, as one object literal:
 * objects of one shape per route, made faster than by assigning keys one by one. The names are
 * template names (letters, digits, `_`, `$`, `-`), quoted by JSON.stringify all the same.
 */
function paramsMaker(names: readonly string[]): (values: readonly string[]) => Record<string, string> {
  const fields = names.map((name, i) => `${JSON.stringify(name)}: v[${i}]`);
  return new Function('v', `return { ${fields.join(', ')} };`) as (values: readonly string[]) => Record<string, string>;
}

/**
 * Called once the tree is complete: a chain of nodes that only lead on to one literal segment
 * becomes one edge (`items/latest`), compared at once; a node with many edges finds them by the
 * hash of their first segment.
 */
export function finishTree(tree: SegmentTree): void {
  const visit = (node: TreeNode): void => {
    if (node.statics !== undefined) {
      const edges: (string | TreeNode)[] = [];
      for (const [literal, next] of node.statics) {
        let text = literal;
        let to = next;
        while (isPassage(to)) {
          const [onward, after] = [...to.statics!][0]!;
          text += '/' + onward;
          to = after;
        }
        edges.push(text, to);
        visit(to);
      }
      if (edges.length <= 2 * FEW) node.fewEdges = edges;
      else {
        node.byHash = new Map();
        for (let i = 0; i < edges.length; i += 2) {
          const text = edges[i] as string;
          const slash = text.indexOf('/');
          const h = segmentHash(text, 0, slash < 0 ? text.length : slash);
          const bucket = node.byHash.get(h);
          if (bucket === undefined) node.byHash.set(h, [text, edges[i + 1]!]);
          else bucket.push(text, edges[i + 1]!);
        }
      }
    }
    node.patterns?.forEach((e) => visit(e.node));
    if (node.param !== undefined) visit(node.param);
  };
  visit(tree.root);
}

/** A node that only leads on to one literal segment: no route ends or forks there. */
function isPassage(node: TreeNode): boolean {
  return (
    node.leaf === undefined &&
    node.prefix === undefined &&
    node.patterns === undefined &&
    node.param === undefined &&
    node.statics?.size === 1
  );
}

function newNode(): TreeNode {
  return {
    statics: undefined,
    fewEdges: undefined,
    byHash: undefined,
    patterns: undefined,
    param: undefined,
    leaf: undefined,
    prefix: undefined,
  };
}

const WHOLE_PARAM = /^\{([^}]+)\}$/;

/** The child of `node` for one route segment, made if new; the segment's parameter names join `names`. */
function child(node: TreeNode, segment: string, names: string[]): TreeNode {
  if (!segment.includes('{')) {
    // The path is compared decoded but for reserved escapes, `%25` among them.
    const literal = segment.replaceAll('%', '%25');
    node.statics ??= new Map();
    let next = node.statics.get(literal);
    if (next === undefined) node.statics.set(literal, (next = newNode()));
    return next;
  }
  const whole = WHOLE_PARAM.exec(segment);
  if (whole !== null) {
    names.push(whole[1]!);
    return (node.param ??= newNode());
  }
  const pattern = compilePattern(segment);
  names.push(...pattern.names);
  const { names: _, ...shape } = pattern;
  node.patterns ??= [];
  let edge = node.patterns.find((e) => e.key === pattern.key);
  if (edge === undefined) {
    edge = { ...shape, node: newNode() };
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
