/**
 * A reader of the plain subset of YAML that a generated or hand-kept consumers file is written in
 * (docs/consumers.md#the-consumers-file), without the YAML library: block mappings and lists by
 * indentation, one-line flow mappings and lists, and scalars that can only be strings. It exists
 * for speed: the library keeps every node's position and took seconds for ten thousand consumers.
 *
 * Design note. It never guesses: whatever it does not fully understand (a number, a boolean or
 * null, an anchor, a tag, a comment after a value, a multi-line scalar, an escape, a tab, a
 * duplicate key, a second document) makes it answer undefined, and the caller reads the text
 * with the library instead. So a value it returns is the one the library would give for the same
 * text (a unit test compares them); the library also remains the one that locates problems.
 */

/** The data of `text`, or undefined when it is not within the plain subset. */
export function readPlainYaml(text: string): unknown {
  if (text.includes('\t') || text.includes('\r') || text.startsWith('\uFEFF')) return undefined;
  const lines: Line[] = [];
  for (const raw of text.split('\n')) {
    const content = raw.trimStart();
    if (content === '' || content.startsWith('#')) continue;
    // A comment after a value (or a " #" inside quotes, which the library would read the same way).
    if (content.includes(' #')) return undefined;
    lines.push({ indent: raw.length - content.length, text: content.trimEnd() });
  }
  if (lines.length === 0) return undefined;
  const reader = new Reader(lines);
  try {
    const value = reader.block(lines[0]!.indent);
    return reader.done() ? value : undefined;
  } catch (err) {
    if (err === NOT_PLAIN) return undefined;
    throw err;
  }
}

interface Line {
  indent: number;
  text: string;
}

/** Thrown inside the reader when the text leaves the subset; never escapes readPlainYaml. */
const NOT_PLAIN = Symbol('not plain YAML');

function fail(): never {
  throw NOT_PLAIN;
}

/**
 * A plain scalar that YAML's core schema reads as a string: starts with a letter or `_`, no
 * spaces, and a `:` only before another character (`sha256:…`, `https://…`).
 */
const PLAIN = /^[A-Za-z_][A-Za-z0-9_./@+~=-]*(?::[A-Za-z0-9_./@+~=-]+)*$/;
/** A mapping key (but `__proto__`, which would set an object's prototype instead of a key). */
const KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
/** Plain words the core schema reads as booleans or null. */
const NOT_STRINGS = new Set(['true', 'True', 'TRUE', 'false', 'False', 'FALSE', 'null', 'Null', 'NULL']);

class Reader {
  private at = 0;

  constructor(private readonly lines: Line[]) {}

  done(): boolean {
    return this.at === this.lines.length;
  }

  /** The mapping or list whose lines start at column `indent`, from the current line on. */
  block(indent: number): unknown {
    const first = this.lines[this.at];
    if (first === undefined || first.indent !== indent) fail();
    return isItem(first.text) ? this.list(indent) : this.map(indent);
  }

  private list(indent: number): unknown[] {
    const items: unknown[] = [];
    for (let line = this.lines[this.at]; line?.indent === indent && isItem(line.text); line = this.lines[this.at]) {
      const rest = line.text.slice(1).trimStart();
      if (rest === '') {
        this.at++;
        items.push(this.nested(indent, false));
      } else if (keyOf(rest) !== undefined) {
        // "- key: value" opens a mapping whose keys line up with this first one.
        const column = indent + line.text.length - rest.length;
        line.indent = column;
        line.text = rest;
        items.push(this.map(column));
      } else {
        this.at++;
        items.push(inline(rest, false));
      }
    }
    return items;
  }

  private map(indent: number): Record<string, unknown> {
    const map: Record<string, unknown> = {};
    for (let line = this.lines[this.at]; line?.indent === indent; line = this.lines[this.at]) {
      const entry = keyOf(line.text);
      if (entry === undefined || Object.hasOwn(map, entry.key)) fail();
      this.at++;
      map[entry.key] = entry.rest === '' ? this.nested(indent, true) : inline(entry.rest, false);
    }
    const next = this.lines[this.at];
    if (next !== undefined && next.indent > indent) fail();
    return map;
  }

  /** The value on the lines below a key or "-" with nothing after it. */
  private nested(indent: number, ofKey: boolean): unknown {
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

/** `key: rest` (rest trimmed, '' when the value is below), or undefined when the line is not one. */
function keyOf(text: string): { key: string; rest: string } | undefined {
  const colon = text.indexOf(':');
  if (colon <= 0 || (colon + 1 < text.length && text[colon + 1] !== ' ')) return undefined;
  const key = text.slice(0, colon);
  if (!KEY.test(key) || key === '__proto__' || NOT_STRINGS.has(key)) return undefined;
  return { key, rest: text.slice(colon + 1).trim() };
}

/** A value written on its line: a quoted or plain string, or a one-line flow mapping or list (not inside one). */
function inline(text: string, inFlow: boolean): unknown {
  if (text.startsWith('{') && !inFlow) {
    if (!text.endsWith('}')) fail();
    const map: Record<string, unknown> = {};
    for (const part of flowParts(text.slice(1, -1))) {
      const entry = keyOf(part);
      if (entry === undefined || entry.rest === '' || Object.hasOwn(map, entry.key)) fail();
      map[entry.key] = inline(entry.rest, true);
    }
    return map;
  }
  if (text.startsWith('[') && !inFlow) {
    if (!text.endsWith(']')) fail();
    return flowParts(text.slice(1, -1)).map((part) => inline(part, true));
  }
  const quote = text[0];
  if (quote === '"' || quote === "'") {
    // No escapes, no doubled quotes, no comment after it: the text between the quotes is the value.
    const inner = text.slice(1, -1);
    if (text.length < 2 || !text.endsWith(quote) || inner.includes(quote) || inner.includes('\\')) fail();
    if (inFlow && /[,[\]{}]/.test(inner)) fail();
    return inner;
  }
  if (!PLAIN.test(text) || NOT_STRINGS.has(text)) fail();
  return text;
}

/** The comma-separated parts of a flow collection's inside, trimmed; none for an empty one. */
function flowParts(inside: string): string[] {
  if (inside.trim() === '') return [];
  const parts = inside.split(',').map((p) => p.trim());
  // A trailing comma, or an empty part, is left to the library.
  if (parts.some((p) => p === '')) fail();
  return parts;
}
