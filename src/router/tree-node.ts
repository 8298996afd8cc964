/**
 * The shapes of a segment tree (./segment-tree.ts builds it, ./tree-match.ts walks it). Every node
 * is a TreeNode with all its fields set from the start, so the walk reads one object shape
 * (monomorphic property loads); a field a node does not use is null or 0.
 */
import type { ParamsMaker } from './params-maker.js';
import type { RouteEntry } from './types.js';

/** A route in the tree; the walk that found it left its values' places in tree-match.ts. */
export interface TreeLeaf {
  readonly entry: RouteEntry;
  /** The route's parameter names, in the order of its path. */
  readonly names: readonly string[];
  /** For a prefix route: the `/`s before its rest (the prefix's own segments + the leading one). */
  readonly slashes: number;
  /** The params object from the walk's places (and the rest, as `*`): code compiled for these names. */
  readonly makeParams: ParamsMaker;
}

export interface PatternEdge {
  /** The segment with its parameter names blanked (`{}.{}`): two routes with one key share the edge. */
  readonly key: string;
  readonly regex: RegExp;
  /** The longest value worth running the regex on. */
  readonly maxLength: number;
  /** The length of the literal text before the segment's first parameter. */
  readonly lead: number;
  /** The literal text after the segment's last parameter ('' for none). */
  readonly suffix: string;
  readonly node: TreeNode;
}

/** One place in the tree of one host group's routes, for every method at once. */
export class TreeNode {
  /** The literal text of the edge leading here (`items`, or `items/latest` once chained); '' else. */
  edge = '';
  /** The codes of `edge`, compared with the path's: an array element costs less to read than a code of a string. */
  edgeCodes: number[] = [];
  /** While building: the literal children by segment. */
  statics: Map<string, TreeNode> | null = null;
  /** The literal children when few, compared in place (their `edge`). */
  kids: TreeNode[] | null = null;
  /**
   * The literal children when many, by the segmentHash of their edge's first segment masked to the
   * table's size (a power of two): an array index, not a map look-up; the edges of one slot are
   * compared one by one.
   */
  byHash: (TreeNode[] | null)[] | null = null;
  patterns: PatternEdge[] | null = null;
  param: TreeNode | null = null;
  /** The route of each method (by method index) whose path ends here. */
  leaves: (TreeLeaf | null)[] | null = null;
  /** The methods of `leaves`, as bits (./method-set.ts). */
  leafMethods = 0;
  /** The prefix route of each method owning the paths below this node. */
  prefixes: (TreeLeaf | null)[] | null = null;
  prefixMethods = 0;
}

/** The tree of one host group's routes that are not all literal text. */
export interface SegmentTree {
  readonly root: TreeNode;
  /** Whether a prefix route hangs anywhere in the tree (else no candidate is remembered). */
  hasPrefix: boolean;
}
