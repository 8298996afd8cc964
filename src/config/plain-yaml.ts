/**
 * A reader of the plain subset of YAML that a generated or hand-kept consumers file, or a
 * configuration of many routes, is written in (docs/consumers.md#the-consumers-file,
 * docs/performance.md#scale-in-routes), without the YAML library: block mappings and lists by
 * indentation, one-line flow mappings and lists, strings, and the core schema's booleans, nulls
 * and decimal numbers. It exists for speed: the library keeps every node's position and took
 * seconds for ten thousand consumers or routes.
 *
 * Design note. It never guesses: whatever it does not fully understand (a hex, octal or infinite
 * number, an anchor, a tag, a comment after a value, a multi-line scalar, an escape, a tab, a
 * duplicate key, a second document, nesting deeper than the configuration's limit) makes it
 * answer undefined, and the caller reads the text with the library instead. So a value it returns is the one the library would give for the same
 * text, and so are the line and column it gives a path or a key (a unit test compares both), so
 * that a file with a problem is located without the library too.
 */
import type { ConfigPath } from './parsed.js';
import { MAX_NESTING } from './yaml-guards.js';
import { fail, flowParts, NOT_PLAIN, plainScalar } from './plain-yaml-scalars.js';

/** Line and column, from 1. */
export interface Position {
  readonly line: number;
  readonly col: number;
}

/** What the reader gives: the data, and the positions `config/parse.ts`'s ParsedConfig gives. */
export interface PlainDocument {
  readonly value: unknown;
  /** Line and column of the value at `path`, or of its closest existing ancestor. */
  locate(path: ConfigPath): Position;
  /** Line and column of the key `key` inside the mapping at `path` (else of that mapping). */
  locateKey(path: ConfigPath, key: string): Position;
  /** The keys written before `key` in the mapping at `path`, nearest first. */
  keysBefore(path: ConfigPath, key: string): string[];
}

/**
 * The data of `text`, or undefined when it is not within the plain subset. Positions are found
 * when first asked for, by a second reading that keeps them: a valid file never pays for them.
 */
export function readPlainYaml(text: string): PlainDocument | undefined {
  const read = readLines(text, undefined);
  if (read === undefined) return undefined;
  let positioned: { root: Read; metas: WeakMap<object, Meta> } | undefined;
  return documentOf(read.value, () => {
    if (positioned === undefined) {
      const metas = new WeakMap<object, Meta>();
      positioned = { root: readLines(text, metas)!, metas };
    }
    return positioned;
  });
}

/** The document of `text`; `metas`, when given, receives every mapping's and list's positions. */
function readLines(text: string, metas: WeakMap<object, Meta> | undefined): Read | undefined {
  if (text.includes('\t') || text.includes('\r') || text.startsWith('\uFEFF')) return undefined;
  const lines: Line[] = [];
  const raws = text.split('\n');
  for (let i = 0; i < raws.length; i++) {
    const raw = raws[i]!;
    const content = raw.trimStart();
    if (content === '' || content.startsWith('#')) continue;
    // A comment after a value (or a " #" inside quotes, which the library would read the same way).
    if (content.includes(' #')) return undefined;
    lines.push({ line: i + 1, indent: raw.length - content.length, text: content.trimEnd() });
  }
  if (lines.length === 0) return undefined;
  const reader = new Reader(lines, metas);
  try {
    const root = reader.block(lines[0]!.indent);
    return reader.done() ? root : undefined;
  } catch (err) {
    if (err === NOT_PLAIN) return undefined;
    throw err;
  }
}

interface Line {
  /** The line's number in the text, from 1. */
  readonly line: number;
  /** The column its content starts at, from 0 (moved past "- " for a list item's mapping). */
  indent: number;
  text: string;
}

/** A value read, and where it starts. */
interface Read {
  readonly value: unknown;
  readonly at: Position;
}

/** Where the children of a mapping or list start: by key (and where the key is) or index. */
interface Meta {
  readonly children: Map<string | number, { readonly at: Position; readonly keyAt?: Position }>;
}

/**
 * Deepest nesting read here, counted as open mappings and lists; the library's guard
 * (yaml-guards.ts) counts "- key:" as two levels, so half its limit keeps every file it would
 * refuse out of this reader, and that refusal located as before.
 */
const MAX_DEPTH = MAX_NESTING / 2;

/** A mapping key (but `__proto__`, which would set an object's prototype instead of a key). */
const KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
/** Plain words the core schema reads as booleans or null. */
const NOT_STRINGS = new Set(['true', 'True', 'TRUE', 'false', 'False', 'FALSE', 'null', 'Null', 'NULL']);

class Reader {
  private at = 0;

  constructor(
    private readonly lines: Line[],
    /** Where positions are kept; undefined: not kept. */
    private readonly meta: WeakMap<object, Meta> | undefined,
  ) {}

  done(): boolean {
    return this.at === this.lines.length;
  }

  /** How many block mappings and lists are open. */
  private depth = 0;

  /** The mapping or list whose lines start at column `indent`, from the current line on. */
  block(indent: number): Read {
    const first = this.lines[this.at];
    if (first === undefined || first.indent !== indent || ++this.depth > MAX_DEPTH) fail();
    const read = isItem(first.text) ? this.list(indent) : this.map(indent);
    this.depth--;
    return read;
  }

  private list(indent: number): Read {
    const items: unknown[] = [];
    const meta: Meta | undefined = this.meta && { children: new Map() };
    const at = { line: this.lines[this.at]!.line, col: indent + 1 };
    for (let line = this.lines[this.at]; line?.indent === indent && isItem(line.text); line = this.lines[this.at]) {
      const rest = line.text.slice(1).trimStart();
      const column = indent + line.text.length - rest.length;
      let item: Read;
      if (rest === '') {
        this.at++;
        item = this.nested(indent, false);
      } else if (keyOf(rest) !== undefined) {
        // "- key: value" opens a mapping whose keys line up with this first one.
        line.indent = column;
        line.text = rest;
        item = this.map(column);
      } else {
        this.at++;
        item = inline(rest, { line: line.line, col: column + 1 }, this.depth, this.meta);
      }
      meta?.children.set(items.length, { at: item.at });
      items.push(item.value);
    }
    if (meta !== undefined) this.meta!.set(items, meta);
    return { value: items, at };
  }

  private map(indent: number): Read {
    const map: Record<string, unknown> = {};
    const meta: Meta | undefined = this.meta && { children: new Map() };
    const at = { line: this.lines[this.at]!.line, col: indent + 1 };
    for (let line = this.lines[this.at]; line?.indent === indent; line = this.lines[this.at]) {
      const entry = keyOf(line.text);
      if (entry === undefined || Object.hasOwn(map, entry.key)) fail();
      this.at++;
      const value =
        entry.rest === ''
          ? this.nested(indent, true)
          : inline(entry.rest, { line: line.line, col: indent + entry.restAt + 1 }, this.depth, this.meta);
      map[entry.key] = value.value;
      meta?.children.set(entry.key, { at: value.at, keyAt: { line: line.line, col: indent + 1 } });
    }
    const next = this.lines[this.at];
    if (next !== undefined && next.indent > indent) fail();
    if (meta !== undefined) this.meta!.set(map, meta);
    return { value: map, at };
  }

  /** The value on the lines below a key or "-" with nothing after it. */
  private nested(indent: number, ofKey: boolean): Read {
    const next = this.lines[this.at];
    if (next !== undefined && next.indent > indent) return this.block(next.indent);
    // A key's list may start at the key's own column.
    if (ofKey && next !== undefined && next.indent === indent && isItem(next.text)) return this.list(indent);
    return fail();
  }
}

function isItem(text: string): boolean {
  return text === '-' || text.startsWith('- ');
}

/**
 * `key: rest` (rest trimmed, '' when the value is below; `restAt` its offset in `text`), or
 * undefined when the text is not one.
 */
function keyOf(text: string): { key: string; rest: string; restAt: number } | undefined {
  const colon = text.indexOf(':');
  if (colon <= 0 || (colon + 1 < text.length && text[colon + 1] !== ' ')) return undefined;
  const key = text.slice(0, colon);
  if (!KEY.test(key) || key === '__proto__' || NOT_STRINGS.has(key)) return undefined;
  const after = text.slice(colon + 1);
  const rest = after.trim();
  return { key, rest, restAt: colon + 1 + after.length - after.trimStart().length };
}

/**
 * A value written on its line, starting at `at`: a quoted or plain string, a core-schema scalar,
 * or a one-line flow mapping or list. `depth`: the mappings and lists it is in; `flow`: whether
 * one of them is a flow collection (where `,[]{}` end a plain scalar).
 */
function inline(
  text: string,
  at: Position,
  depth: number,
  metas: WeakMap<object, Meta> | undefined,
  flow = false,
): Read {
  if (text.startsWith('{') || text.startsWith('[')) {
    const isMap = text.startsWith('{');
    if (!text.endsWith(isMap ? '}' : ']') || depth + 1 > MAX_DEPTH) fail();
    const meta: Meta | undefined = metas && { children: new Map() };
    const parts = flowParts(text.slice(1, -1), at.col + 1);
    let value: Record<string, unknown> | unknown[];
    if (isMap) {
      const map: Record<string, unknown> = {};
      for (const part of parts) {
        const entry = keyOf(part.text);
        if (entry === undefined || entry.rest === '' || Object.hasOwn(map, entry.key)) fail();
        const read = inline(entry.rest, { line: at.line, col: part.col + entry.restAt }, depth + 1, metas, true);
        map[entry.key] = read.value;
        meta?.children.set(entry.key, { at: read.at, keyAt: { line: at.line, col: part.col } });
      }
      value = map;
    } else
      value = parts.map((part, i) => {
        const read = inline(part.text, { line: at.line, col: part.col }, depth + 1, metas, true);
        meta?.children.set(i, { at: read.at });
        return read.value;
      });
    if (meta !== undefined) metas!.set(value, meta);
    return { value, at };
  }
  const quote = text[0];
  if (quote === '"' || quote === "'") {
    // No escapes, no doubled quotes, no comment after it: the text between the quotes is the value.
    const inner = text.slice(1, -1);
    if (text.length < 2 || !text.endsWith(quote) || inner.includes(quote) || inner.includes('\\')) fail();
    return { value: inner, at };
  }
  return { value: plainScalar(text, flow), at };
}

/** The document: `value`, and its locators over the positions of `positioned()`'s reading. */
function documentOf(value: unknown, positioned: () => { root: Read; metas: WeakMap<object, Meta> }): PlainDocument {
  /** The value at `path`, or its closest existing ancestor, where it starts, and its positions. */
  const nodeAt = (path: ConfigPath): { meta: Meta | undefined; at: Position } => {
    const { root, metas } = positioned();
    let node = root.value;
    let at = root.at;
    for (const key of path) {
      const child = typeof node === 'object' && node !== null ? metas.get(node)?.children.get(key) : undefined;
      if (child === undefined) break;
      node = (node as Record<string | number, unknown>)[key];
      at = child.at;
    }
    const isMap = typeof node === 'object' && node !== null && !Array.isArray(node);
    return { meta: isMap ? metas.get(node as object) : undefined, at };
  };
  return {
    value,
    locate: (path) => nodeAt(path).at,
    locateKey: (path, key) => {
      const node = nodeAt(path);
      return node.meta?.children.get(key)?.keyAt ?? node.at;
    },
    keysBefore: (path, key) => {
      const { meta } = nodeAt(path);
      if (meta === undefined) return [];
      const keys = [...meta.children.keys()].map(String);
      const end = keys.indexOf(key);
      return keys.slice(0, end === -1 ? 0 : end).reverse();
    },
  };
}
