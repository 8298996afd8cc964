/**
 * Method + path to route, for one group of routes (all of them, or those of one host), built once
 * per configuration. Precedence (docs/routing.md "Precedence"): an all-literal path first, found
 * by one map look-up whatever the number of routes; then the other routes without `*` in the
 * group's segment tree (./segment-tree.ts: a literal segment before a parameter, segment by
 * segment); then prefix routes, the longest first. A route found with a literal path answers with
 * a match made once, when the table is built.
 */
import { addToTree, createSegmentTree, finishTreeWork, type SegmentTree } from './segment-tree.js';
import { runWhole, type Work } from '../config/sliced-work.js';
import { matchTree, missedMethods } from './tree-match.js';
import { METHOD_COUNT, methodBit, methodIndex } from './method-set.js';
import type { Match, RouteEntry } from './types.js';

/** The literal paths' lengths are told apart up to this one. */
const LONG_PATH = 255;

const NO_PARAMS: Record<string, string> = Object.freeze({});

/** The routes of one all-literal path, by method index, and their methods as bits. */
interface LiteralPath {
  readonly matches: (Match | undefined)[];
  methods: number;
}

/** The routes of one host group, matched by method and path. */
export class PathTable {
  /**
   * After a lookup that returned undefined, the methods (as bits, ./method-set.ts) whose routes
   * in this table take the path: the `Allow` of a 405, learnt without another walk.
   */
  missed = 0;
  private readonly literal: Map<string, LiteralPath>;
  /**
   * 1 at each length (up to LONG_PATH, which stands for every longer one) of an all-literal path:
   * a path of another length skips the map look-up, whose hash of a new string costs more.
   */
  private readonly literalLengths = new Uint8Array(LONG_PATH + 1);
  private readonly tree: SegmentTree | null;

  constructor(literal: Map<string, LiteralPath>, tree: SegmentTree | null) {
    this.literal = literal;
    this.tree = tree;
    for (const path of literal.keys()) this.literalLengths[Math.min(path.length, LONG_PATH)] = 1;
  }

  /**
   * The match when a route of this table takes the request (or refuses its path); else undefined.
   * `index` and `bit` are the method's (./method-set.ts), `path` is compared, `raw` is where a
   * prefix route's rest is cut from, and `decode` says whether parameter values still hold
   * reserved escapes (./request-path.ts).
   */
  lookup(index: number, bit: number, path: string, raw: string, decode: boolean): Match | undefined {
    const literal =
      this.literalLengths[path.length < LONG_PATH ? path.length : LONG_PATH] === 0 ? undefined : this.literal.get(path);
    let missed = 0;
    if (literal !== undefined) {
      if ((literal.methods & bit) !== 0) return literal.matches[index];
      missed = literal.methods;
    }
    if (this.tree !== null) {
      const m = matchTree(this.tree, index, bit, path, raw, decode);
      if (m !== undefined) return m;
      missed |= missedMethods();
    }
    this.missed = missed;
    return undefined;
  }
}

/**
 * Builds the table of `entries`. A GET route also answers HEAD unless a HEAD route is configured
 * for the same path (RFC 9110 9.3.2: HEAD is GET without the body); the backend receives HEAD.
 * The configured routes are placed first, so a HEAD route takes its path from the GET route's
 * HEAD whatever the order of the file or the names of their parameters.
 */
export function createPathTable(entries: readonly RouteEntry[]): PathTable {
  return runWhole(pathTableWork(entries));
}

/** `createPathTable` as interruptible work (config/sliced-work.ts), after each route placed. */
export function* pathTableWork(entries: readonly RouteEntry[]): Work<PathTable> {
  const literal = new Map<string, LiteralPath>();
  const tree = createSegmentTree();
  let hasTree = false;
  for (let pass = 0; pass < 2; pass++)
    for (const entry of entries) {
      const { method, clientPath, isPrefix } = entry.route;
      if (pass === 1 && method !== 'GET') continue;
      const index = methodIndex(pass === 0 ? method : 'HEAD');
      yield;
      if (isPrefix || clientPath.includes('{')) {
        addToTree(tree, index, entry, clientPath, isPrefix);
        hasTree = true;
        continue;
      }
      const key = clientPath.replaceAll('%', '%25');
      let routes = literal.get(key);
      if (routes === undefined) {
        routes = { matches: new Array<Match | undefined>(METHOD_COUNT).fill(undefined), methods: 0 };
        literal.set(key, routes);
      }
      routes.matches[index] ??= Object.freeze({ kind: 'found', entry, params: NO_PARAMS });
      routes.methods |= methodBit(index);
    }
  if (hasTree) yield* finishTreeWork(tree);
  return new PathTable(literal, hasTree ? tree : null);
}
