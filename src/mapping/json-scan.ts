/**
 * A strict RFC 8259 scanner that finds where things are in a JSON text instead of building values.
 *
 * Design note: enrichment must leave every byte it does not own untouched (docs/design-decisions.md "Response
 * mapping": integers beyond 2^53, number text such as `1.0` or `1e5`, key order, escapes and
 * unicode survive exactly). `JSON.parse` loses big integers and Node 20 has no source-text access,
 * so the mapped route never re-serialises the primary body: this scanner validates it and reports
 * the span of each item and of each item's top-level members; splice.ts edits those spans.
 * Nested values are skipped with an explicit stack, so deep nesting cannot overflow the call stack.
 * Bytes are compared as literal char codes, each with its character in a comment: a literal is
 * what every compiler emits as it is, where a named constant or enum member (an object under
 * `verbatimModuleSyntax`) is a load at every comparison of the scanner's loops.
 */

import { fail, scanOrUndefined } from './scan-fail.js';
import { ItemTable, type ObjectSpan } from './item-table.js';

export { fail, scanOrUndefined } from './scan-fail.js';

export type { MemberSpan, ObjectSpan, ValueKind } from './item-table.js';

/**
 * The items of a primary body, or undefined when the text is not valid JSON or is not an object
 * or an array of objects (that body is then returned unchanged: docs/design-decisions.md).
 */
export function scanItemTable(text: string): ItemTable | undefined {
  return scanOrUndefined(() => new Scanner(text).items());
}

/** The items of `scanItemTable` as objects. */
export function scanItems(text: string): ObjectSpan[] | undefined {
  const table = scanItemTable(text);
  return table === undefined ? undefined : Array.from({ length: table.count }, (_, i) => table.span(i));
}

/** Unescapes a JSON string literal given by its span (quotes included). */
export function stringValue(text: string, start: number, end: number): string {
  const inner = text.slice(start + 1, end - 1);
  return inner.includes('\\') ? (JSON.parse(text.slice(start, end)) as string) : inner;
}

const LITERALS = ['true', 'false', 'null'] as const;

const isDigit = (c: number): boolean => c >= 0x30 /* 0 */ && c <= 0x39; /* 9 */
/** One escape of a string literal, read where a backslash stands (sticky). */
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/** A backslash or a control character: what a string literal's fast path must not meet. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const SPECIAL = /[\x00-\x1f\\]/g;

/** The strict scanner's primitives, shared by the scans that build something else (field-filter.ts). */
export class Scanner {
  /** The first backslash or control character at or after `specialFrom` (the text's length: none). */
  private nextSpecial = -1;
  private specialFrom = 0;

  /** Set by `memberHead`: the offset just after the key's closing quote. */
  keyEnd = 0;
  /** Set by `elementAfter` at an array's `]`: the offset just after it. */
  listEnd = 0;
  /** Set by `memberHead`: whether the key held an escape (its name then needs unescaping). */
  keyEscaped = false;

  constructor(readonly text: string) {}

  /** The first backslash or control character at or after `p`: searched natively, remembered. */
  specialAt(p: number): number {
    if (p < this.specialFrom || p > this.nextSpecial) {
      SPECIAL.lastIndex = p;
      this.nextSpecial = SPECIAL.test(this.text) ? SPECIAL.lastIndex - 1 : this.text.length;
      this.specialFrom = p;
    }
    return this.nextSpecial;
  }

  items(): ItemTable {
    const t = this.text;
    // Arrays of records of a few short fields take about 12 bytes a member.
    const table = new ItemTable(t.length >> 3);
    let p = this.ws(0);
    const c = t.charCodeAt(p);
    if (c === 0x7b /* { */) p = this.object(p, table);
    else if (c === 0x5b /* [ */) {
      p = this.ws(p + 1);
      if (t.charCodeAt(p) === 0x5d /* ] */) p++;
      else {
        for (;;) {
          if (t.charCodeAt(p) !== 0x7b /* { */) fail();
          if ((p = this.elementAfter(this.object(p, table))) < 0) break;
        }
      }
    } else return fail();
    if (this.ws(p < 0 ? this.listEnd : p) !== t.length) fail();
    return table;
  }

  /** An object whose top-level members go into `table`; `start` is at its `{`. Returns its end. */
  private object(start: number, table: ItemTable): number {
    const t = this.text;
    // The items of an array mostly share their keys, in order: each reuses the names before it.
    const like = table.count > 0 ? table.first(table.count - 1) : -1;
    const likeEnd = table.first(table.count);
    table.addItem(start);
    let p = this.ws(start + 1);
    if (t.charCodeAt(p) !== 0x7d /* } */) {
      for (let k = 0; ; k++) {
        const keyStart = p;
        const valueStart = this.memberHead(p);
        // The key is read before the value: a nested object's keys move `keyEnd`.
        const same = like >= 0 && like + k < likeEnd && this.sameName(table.name(like + k), keyStart);
        const name = same ? '' : this.keyName(keyStart);
        const valueEnd = this.skipValue(valueStart);
        table.addMember(keyStart, valueStart, valueEnd, this.kindAt(valueStart), same ? like + k : -1, name);
        p = this.ws(valueEnd);
        const d = t.charCodeAt(p);
        if (d === 0x2c /* , */) p = this.ws(p + 1);
        else if (d === 0x7d /* } */) break;
        else fail();
      }
    }
    table.endItem(p + 1);
    return p + 1;
  }

  /** The code (item-table.ts) of the kind of value at `p`. */
  kindAt(p: number): number {
    const c = this.text.charCodeAt(p);
    if (c === 0x22 /* " */) return 0; // string
    if (c === 0x7b /* { */) return 5; // object
    if (c === 0x5b /* [ */) return 6; // array
    if (c === 0x74 /* t */) return 2; // true
    if (c === 0x66 /* f */) return 3; // false
    if (c === 0x6e /* n */) return 4; // null
    return 1; // number
  }

  /** Skips any value starting at `p` (no whitespace before it); returns the offset after it. */
  skipValue(p: number): number {
    const t = this.text;
    const first = t.charCodeAt(p);
    // Most values are scalars: no stack for them.
    if (first !== 0x7b /* { */ && first !== 0x5b /* [ */) return this.primitive(p);
    // Open containers: true for an object, false for an array.
    const stack: boolean[] = [];
    for (;;) {
      // Here a value starts.
      const c = t.charCodeAt(p);
      let afterValue = true;
      if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        const isObject = c === 0x7b; /* { */
        p = this.ws(p + 1);
        if (t.charCodeAt(p) === (isObject ? 0x7d /* } */ : 0x5d) /* ] */) p++;
        else {
          stack.push(isObject);
          if (isObject) p = this.memberHead(p);
          afterValue = false;
        }
      } else p = this.primitive(p);
      if (!afterValue) continue;
      // A value just ended: close containers or move to the next element.
      for (;;) {
        if (stack.length === 0) return p;
        p = this.ws(p);
        const d = t.charCodeAt(p);
        const isObject = stack[stack.length - 1]!;
        if (d === 0x2c /* , */) {
          p = this.ws(p + 1);
          if (isObject) p = this.memberHead(p);
          break;
        }
        if (d === (isObject ? 0x7d /* } */ : 0x5d) /* ] */) {
          stack.pop();
          p++;
          continue;
        }
        fail();
      }
    }
  }

  /** After an array element ending at `p`: the next one's start past `,`, or -1 at `]` (see listEnd). */
  elementAfter(p: number): number {
    const t = this.text;
    p = this.ws(p);
    const d = t.charCodeAt(p);
    if (d === 0x2c /* , */) return this.ws(p + 1);
    if (d !== 0x5d /* ] */) fail();
    this.listEnd = p + 1;
    return -1;
  }

  /**
   * The head of an object member, `"key" ws : ws`, with `p` at the key's opening quote: returns
   * where the value starts, and leaves `keyEnd` and `keyEscaped` describing the key. Every scan
   * reads its members through here (the item scan, the batch answer's, the field filter's).
   */
  memberHead(p: number): number {
    const t = this.text;
    if (t.charCodeAt(p) !== 0x22 /* " */) fail();
    // Most keys hold no escape (see `string`); any other key is read by the strict scan.
    const close = t.indexOf('"', p + 1);
    const plain = close >= 0 && close < this.specialAt(p + 1);
    const keyEnd = plain ? close + 1 : this.string(p);
    this.keyEnd = keyEnd;
    this.keyEscaped = !plain; // past the strict scan, it held a backslash (a control character fails)
    p = this.ws(keyEnd);
    if (t.charCodeAt(p) !== 0x3a /* : */) fail();
    return this.ws(p + 1);
  }

  /** Whether the key `memberHead` just read is `name` written the same (then no new string). */
  private sameName(name: string, keyStart: number): boolean {
    if (this.keyEscaped) return false;
    return name.length === this.keyEnd - keyStart - 2 && this.text.startsWith(name, keyStart + 1);
  }

  /** The name of the key `memberHead` just read, `keyStart` being its opening quote. */
  keyName(keyStart: number): string {
    const t = this.text;
    return this.keyEscaped
      ? (JSON.parse(t.slice(keyStart, this.keyEnd)) as string)
      : t.slice(keyStart + 1, this.keyEnd - 1);
  }

  primitive(p: number): number {
    const t = this.text;
    const c = t.charCodeAt(p);
    if (c === 0x22 /* " */) return this.string(p);
    if (c === 0x2d /* - */ || isDigit(c)) return this.number(p);
    for (const word of LITERALS) if (t.startsWith(word, p)) return p + word.length;
    return fail();
  }

  /** A string literal at `p` (its opening quote); returns the offset after the closing quote. */
  string(p: number): number {
    const t = this.text;
    // Most strings hold no escape: their end is the next quote, found natively, when no backslash
    // or control character comes before it.
    const close = t.indexOf('"', p + 1);
    if (close >= 0 && close < this.specialAt(p + 1)) return close + 1;
    p++;
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === 0x22 /* " */) return p + 1;
      if (Number.isNaN(c) || c < 0x20) fail();
      if (c === 0x5c /* \ */) {
        ESCAPE.lastIndex = p;
        if (!ESCAPE.test(t)) fail();
        p = ESCAPE.lastIndex;
      } else p++;
    }
  }

  /** `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` */
  number(p: number): number {
    const t = this.text;
    if (t.charCodeAt(p) === 0x2d /* - */) p++;
    if (t.charCodeAt(p) === 0x30 /* 0 */) p++;
    else if (isDigit(t.charCodeAt(p))) while (isDigit(t.charCodeAt(p))) p++;
    else fail();
    if (t.charCodeAt(p) === 0x2e /* . */) {
      p++;
      if (!isDigit(t.charCodeAt(p))) fail();
      while (isDigit(t.charCodeAt(p))) p++;
    }
    const e = t.charCodeAt(p);
    if (e === 0x65 /* e */ || e === 0x45 /* E */) {
      p++;
      const s = t.charCodeAt(p);
      if (s === 0x2b /* + */ || s === 0x2d /* - */) p++;
      if (!isDigit(t.charCodeAt(p))) fail();
      while (isDigit(t.charCodeAt(p))) p++;
    }
    return p;
  }

  /**
   * Skips JSON whitespace (space, tab, LF, CR). Never reads past the text: every scan ends here at
   * the text's end, and a `charCodeAt` out of bounds makes V8 drop the inlined `charCodeAt` from
   * the optimized code (a builtin call per character from then on).
   */
  ws(p: number): number {
    const t = this.text;
    for (; p < t.length; p++) {
      const c = t.charCodeAt(p);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    }
    return p;
  }
}
