/**
 * Guards around the YAML parser, so that a hostile or mangled file ends in located problems
 * rather than an exception, a stack overflow or a memory spike:
 * - nesting depth is measured on the token stream before any tree is built (the parser, the
 *   composer and the validator all recurse once per level);
 * - alias expansion is counted on the document before it becomes data (a few lines of
 *   anchors can stand for billions of nodes), and every alias must name an earlier anchor;
 * - duplicate keys and the parser's indentation errors are explained in terms of the slip that
 *   usually causes them: an outdented key, a list item without its "-", an over-indented key.
 */
import {
  CST,
  Lexer,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  type Document,
  type Node,
  type Pair,
  type YAMLError,
} from 'yaml';

/** Deepest nesting of lists and mappings accepted; a gateway configuration needs fewer than ten. */
export const MAX_NESTING = 64;

/** Most nodes that aliases may add to the document once expanded. */
export const MAX_ALIAS_NODES = 100_000;

export interface Slip {
  /** Offset in the text where the problem is reported. */
  readonly offset: number;
  readonly message: string;
  readonly hint?: string;
}

/**
 * The offset of the first token nested deeper than `max` levels, or undefined. Block levels
 * follow the columns at which nodes start (a line, or the content after "- " or "? "), flow
 * levels the brackets; scanning stops at the first excess, so a bomb costs only its first lines.
 */
export function findExcessNesting(text: string, max = MAX_NESTING): number | undefined {
  const blockCols: number[] = [];
  let flow = 0;
  let offset = 0;
  let col = 0;
  let expectNode = true;
  let scalarNext = false;
  const enterBlock = (c: number) => {
    while (blockCols.length > 0 && blockCols[blockCols.length - 1]! >= c) blockCols.pop();
    blockCols.push(c);
  };
  for (const token of new Lexer().lex(text)) {
    // The lexer announces scalars and modes with control characters that are not in the text.
    if (!scalarNext && (token === CST.SCALAR || token === CST.DOCUMENT || token === CST.FLOW_END)) {
      scalarNext = token === CST.SCALAR;
      continue;
    }
    const type = scalarNext ? 'scalar' : CST.tokenType(token);
    scalarNext = false;
    const start = offset;
    const startCol = col;
    offset += token.length;
    const nl = token.lastIndexOf('\n');
    col = nl === -1 ? col + token.length : token.length - nl - 1;
    const endsLine = token.endsWith('\n');
    switch (type) {
      case 'newline':
        expectNode = true;
        continue;
      case 'space':
      case 'comment':
      case 'comma':
      case 'byte-order-mark':
      case 'directive-line':
        if (endsLine || nl !== -1) expectNode = true;
        continue;
      case 'doc-start':
      case 'doc-end':
        blockCols.length = 0;
        flow = 0;
        expectNode = true;
        continue;
      case 'flow-map-start':
      case 'flow-seq-start':
        if (flow === 0 && expectNode) enterBlock(startCol);
        flow += 1;
        expectNode = false;
        break;
      case 'flow-map-end':
      case 'flow-seq-end':
        if (flow > 0) flow -= 1;
        continue;
      case 'seq-item-ind':
      case 'explicit-key-ind':
        if (flow === 0) enterBlock(startCol);
        expectNode = true;
        break;
      default:
        if (flow === 0 && expectNode) enterBlock(startCol);
        expectNode = endsLine;
    }
    if (blockCols.length + flow > max) return start;
  }
  return undefined;
}

/**
 * Aliases that name no earlier anchor, that sit inside the node they name, or that together
 * expand the document by more than `maxNodes` nodes (reported once, at the alias that crosses
 * the limit). Counting follows the document in order, as anchors are defined, and sizes are
 * kept per node, so the check is linear in the size of the text.
 */
export function aliasSlips(doc: Document, maxNodes = MAX_ALIAS_NODES): Slip[] {
  const slips: Slip[] = [];
  const anchors = new Map<string, Node>();
  const sizes = new Map<unknown, number>();
  const open = new Set<unknown>();
  let added = 0;
  let tooMuch = false;
  const size = (node: unknown): number => {
    if (node === null || node === undefined || tooMuch) return 1;
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      const offset = node.range?.[0] ?? 0;
      if (target === undefined) {
        slips.push({
          offset,
          message: `alias *${node.source} names no anchor: write &${node.source} on a value above it`,
        });
        return 1;
      }
      if (open.has(target)) {
        slips.push({
          offset,
          message: `alias *${node.source} is inside the value it names (&${node.source}), which would repeat forever`,
        });
        return 1;
      }
      const n = sizes.get(target) ?? 1;
      added += n;
      if (added > maxNodes) {
        tooMuch = true;
        slips.push({
          offset,
          message: `aliases expand too much (more than ${maxNodes} values once expanded)`,
          hint: 'write the values out, or use fewer nested aliases',
        });
      }
      return n;
    }
    const anchor = (node as { anchor?: string }).anchor;
    if (anchor) anchors.set(anchor, node as Node);
    let n = 1;
    if (isMap(node) || isSeq(node)) {
      open.add(node);
      for (const item of node.items as unknown[]) {
        if (isPair(item)) n += size(item.key) + size(item.value);
        else n += size(item);
      }
      open.delete(node);
    }
    sizes.set(node, n);
    return n;
  };
  size(doc.contents);
  return slips;
}

type PathPart = string | number;

/**
 * Keys written twice in one mapping. Several repeated keys in a list item usually mean a missing
 * "-" (one problem, at the line that should start the new item); a single repeated key usually
 * means an outdented line that now belongs to the mapping above its intended parent.
 */
export function duplicateKeySlips(doc: Document, lineOf: (offset: number) => number): Slip[] {
  const slips: Slip[] = [];
  const walk = (node: unknown, path: PathPart[], inList: boolean) => {
    if (isSeq(node)) {
      node.items.forEach((item, i) => walk(item, [...path, i], true));
      return;
    }
    if (!isMap(node)) return;
    const pairs = node.items as Pair<unknown, unknown>[];
    const first = new Map<string, number>();
    const repeats: { key: string; firstIndex: number; index: number }[] = [];
    pairs.forEach((pair, i) => {
      if (!isScalar(pair.key)) return;
      const key = String(pair.key.value);
      const seen = first.get(key);
      if (seen === undefined) first.set(key, i);
      else repeats.push({ key, firstIndex: seen, index: i });
    });
    const label = formatPath(path);
    const where = label ? `${label}: ` : '';
    const keyOffset = (i: number) => (pairs[i]!.key as Node).range?.[0] ?? 0;
    if (inList && new Set(repeats.map((r) => r.key)).size >= 2) {
      const startAt = repeats.reduce((a, b) => (b.index < a.index ? b : a));
      const keys = [...new Set(repeats.map((r) => r.key))];
      const line = lineOf(keyOffset(startAt.index));
      slips.push({
        offset: keyOffset(startAt.index),
        message: `${where}${keys.map((k) => `"${k}"`).join(', ')} appear twice in one list item (from line ${lineOf(keyOffset(startAt.firstIndex))} and again from line ${line})`,
        hint: `if line ${line} starts a new item, write "- " before "${startAt.key}"`,
      });
    } else {
      for (const r of repeats) {
        const line = lineOf(keyOffset(r.index));
        let owner: Pair<unknown, unknown> | undefined;
        for (let i = r.index - 1; i > r.firstIndex; i--) {
          const p = pairs[i]!;
          if (isScalar(p.key) && (p.value === null || (isScalar(p.value) && p.value.value === null))) {
            owner = p;
            break;
          }
        }
        const ownerKey = owner && isScalar(owner.key) ? owner.key : undefined;
        slips.push({
          offset: keyOffset(r.index),
          message: `${where}key "${r.key}" is written twice, on lines ${lineOf(keyOffset(r.firstIndex))} and ${line}`,
          hint: ownerKey
            ? `check the indentation of line ${line}: "${r.key}" may belong under "${String(ownerKey.value)}:" on line ${lineOf(ownerKey.range?.[0] ?? 0)}`
            : `check the indentation of line ${line}, or remove one of them`,
        });
      }
    }
    for (const pair of pairs) {
      if (isScalar(pair.key)) walk(pair.value, [...path, String(pair.key.value)], false);
    }
  };
  walk(doc.contents, [], false);
  return slips;
}

const KEY_LINE = /^(\s*)(?:-\s+)*([^\s#:'"][^:#]*?|"[^"]*"|'[^']*'):(?:\s|$)/;

/**
 * The parser reports a key indented deeper than the key above it ("path" under "service:
 * localhost") at the line above, as a compact or multi-line key. Points at the deeper key
 * instead; undefined when the text does not show that slip.
 */
export function overIndentedKey(text: string, error: YAMLError, lineStarts: readonly number[]): Slip | undefined {
  if (error.code !== 'BLOCK_AS_IMPLICIT_KEY' && error.code !== 'MULTILINE_IMPLICIT_KEY') return undefined;
  const lines = text.split('\n', lineStarts.length + 1);
  let lineIndex = 0;
  while (lineIndex + 1 < lineStarts.length && lineStarts[lineIndex + 1]! <= error.pos[0]) lineIndex++;
  const above = KEY_LINE.exec(lines[lineIndex] ?? '');
  if (!above) return undefined;
  const aboveCol = (lines[lineIndex] ?? '').length - (lines[lineIndex] ?? '').trimStart().length;
  const keyCol = (lines[lineIndex] ?? '').indexOf(above[2]!);
  for (let i = lineIndex + 1; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const indent = line.length - line.trimStart().length;
    if (indent <= aboveCol) return undefined;
    const m = KEY_LINE.exec(line);
    if (!m) continue;
    const key = m[2]!;
    return {
      offset: lineStarts[i]! + line.indexOf(key),
      message: `"${key}" on line ${i + 1} is indented deeper than "${above[2]}" on line ${lineIndex + 1}, so YAML reads it as part of that value`,
      hint: `check the indentation of "${key}": start it in column ${keyCol + 1}, like "${above[2]}"`,
    };
  }
  return undefined;
}

/** `config.auth`, `routes[0].mapping[1]`: a path as the problems name it. */
export function formatPath(path: readonly (string | number | symbol)[]): string {
  let out = '';
  for (const k of path) out += typeof k === 'number' ? `[${k}]` : out ? `.${String(k)}` : String(k);
  return out;
}
