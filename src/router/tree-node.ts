/** The shapes of a segment tree (./segment-tree.ts builds it, ./tree-match.ts walks it). Types only. */
import type { RouteEntry } from './types.js';

/** A route in the tree; the walk that found it left its values in tree-match.ts. */
export interface TreeLeaf {
  readonly entry: RouteEntry;
  /** The route's parameter names, in the order of its path. */
  readonly names: readonly string[];
  /** For a prefix route: the `/`s before its rest (the prefix's own segments + the leading one). */
  readonly slashes: number;
  /** The params object of the walk's values (and the rest, as `*`), made by code compiled for these names. */
  readonly makeParams: (values: readonly string[]) => Record<string, string>;
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

export interface TreeNode {
  statics: Map<string, TreeNode> | undefined;
  /** The literal edges when few, compared in place: literal, node, literal, node... */
  fewEdges: readonly (string | TreeNode)[] | undefined;
  /** The literal edges when many, by the segmentHash of their first segment. */
  byHash: Map<number, (string | TreeNode)[]> | undefined;
  patterns: PatternEdge[] | undefined;
  param: TreeNode | undefined;
  leaf: TreeLeaf | undefined;
  prefix: TreeLeaf | undefined;
}

/** The tree of one method's routes; build with `add`, then match with `find` and `findPrefix`. */
export interface SegmentTree {
  readonly root: TreeNode;
  /** Whether a prefix route hangs anywhere in the tree (else the second walk is skipped). */
  hasPrefix: boolean;
}
