/**
 * Where a path of a JSON document is written, found in its text only when a problem needs it. A
 * large consumers file (config/consumers-file.ts) is read with `JSON.parse`, which keeps no
 * positions; reading it again with the YAML parser to locate one bad key took half a minute for
 * 100,000 consumers. This scans the text instead, and only the containers on the paths asked
 * for: an object's keys or an array's items are indexed the first time a path goes through it,
 * every other value is skipped over character by character without being built.
 *
 * It gives the answers `config/parse.ts` gives for the same text read as YAML (a unit test
 * compares them): the line and column of a value's first character, of a key's opening quote,
 * or of the closest ancestor that exists. A key written twice is found where `JSON.parse` takes
 * its value from: the last time. The text must be valid JSON (`JSON.parse` accepted it).
 */
import type { ConfigPath } from './parse.js';
import type { Position } from './plain-yaml.js';

/** What `ParsedConfig` locates, for a JSON text. */
export interface JsonLocator {
  /** Line and column of the value at `path`, or of its closest existing ancestor. */
  locate(path: ConfigPath): Position;
  /** Line and column of the key `key` inside the object at `path` (else of that value). */
  locateKey(path: ConfigPath, key: string): Position;
  /** The keys written before `key` in the object at `path`, nearest first. */
  keysBefore(path: ConfigPath, key: string): string[];
}

/** One member of an object: its key, where the key's quote is, where its value starts. */
interface Member {
  readonly key: string;
  readonly keyAt: number;
  readonly valueAt: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/** The locator of `text`, a document `JSON.parse` accepted. Nothing is scanned until asked. */
export function jsonLocator(text: string): JsonLocator {
  const scan = new JsonScan(text);
  const objectMembers = (path: ConfigPath): { at: number; members: Member[] | undefined } => {
    const at = scan.valueAt(path);
    return { at, members: text.charCodeAt(at) === OPEN_OBJECT ? scan.membersOf(at) : undefined };
  };
  return {
    locate: (path) => scan.position(scan.valueAt(path)),
    locateKey: (path, key) => {
      const { at, members } = objectMembers(path);
      const member = members === undefined ? undefined : lastMember(members, key);
      return scan.position(member?.keyAt ?? at);
    },
    keysBefore: (path, key) => {
      const { members } = objectMembers(path);
      if (members === undefined) return [];
      const keys = members.map((m) => m.key);
      const end = keys.indexOf(key);
      return keys.slice(0, end === -1 ? 0 : end).reverse();
    },
  };
}

function lastMember(members: readonly Member[], key: string): Member | undefined {
  for (let m = members.length - 1; m >= 0; m--) if (members[m]!.key === key) return members[m];
  return undefined;
}

/** The scan of one text: offsets, and the containers indexed so far (by the offset of their bracket). */
class JsonScan {
  private readonly objects = new Map<number, Member[]>();
  private readonly arrays = new Map<number, number[]>();
  private lineStarts: number[] | undefined;

  constructor(private readonly text: string) {}

  /** The offset of the value at `path`, or of its closest existing ancestor. */
  valueAt(path: ConfigPath): number {
    let at = this.skipSpace(0);
    for (const key of path) {
      const c = this.text.charCodeAt(at);
      let next: number | undefined;
      if (c === OPEN_OBJECT && typeof key === 'string') next = lastMember(this.membersOf(at), key)?.valueAt;
      else if (c === OPEN_ARRAY && typeof key === 'number') next = this.itemsOf(at)[key];
      if (next === undefined) break;
      at = next;
    }
    return at;
  }

  membersOf(open: number): Member[] {
    let members = this.objects.get(open);
    if (members !== undefined) return members;
    const { text } = this;
    members = [];
    let i = this.skipSpace(open + 1);
    while (text.charCodeAt(i) === QUOTE) {
      const keyEnd = this.endOfString(i);
      const valueAt = this.skipSpace(this.skipSpace(keyEnd) + 1); // past the ':'
      const raw = text.slice(i + 1, keyEnd - 1);
      const key = raw.includes('\\') ? (JSON.parse(text.slice(i, keyEnd)) as string) : raw;
      members.push({ key, keyAt: i, valueAt });
      i = this.skipSpace(this.endOfValue(valueAt));
      if (text.charCodeAt(i) === COMMA) i = this.skipSpace(i + 1);
    }
    this.objects.set(open, members);
    return members;
  }

  private itemsOf(open: number): number[] {
    let items = this.arrays.get(open);
    if (items !== undefined) return items;
    const { text } = this;
    items = [];
    let i = this.skipSpace(open + 1);
    while (text.charCodeAt(i) !== CLOSE_ARRAY && i < text.length) {
      items.push(i);
      i = this.skipSpace(this.endOfValue(i));
      if (text.charCodeAt(i) === COMMA) i = this.skipSpace(i + 1);
    }
    this.arrays.set(open, items);
    return items;
  }

  /** Line and column (from 1) of an offset: the line starts are found once, on the first call. */
  position(offset: number): Position {
    const { text } = this;
    let starts = this.lineStarts;
    if (starts === undefined) {
      starts = [0];
      for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
      this.lineStarts = starts;
    }
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, col: offset - starts[low]! + 1 };
  }

  private skipSpace(i: number): number {
    for (;;) {
      const c = this.text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
      i++;
    }
  }

  /** The offset just past the string whose quote is at `i`. */
  private endOfString(i: number): number {
    const { text } = this;
    for (let at = text.indexOf('"', i + 1); ; at = text.indexOf('"', at + 1)) {
      let slashes = 0;
      while (text.charCodeAt(at - 1 - slashes) === BACKSLASH) slashes++;
      if (slashes % 2 === 0) return at + 1;
    }
  }

  /** The offset just past the value that starts at `i`: strings and brackets skipped, nothing built. */
  private endOfValue(i: number): number {
    const { text } = this;
    const c = text.charCodeAt(i);
    if (c === QUOTE) return this.endOfString(i);
    if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) {
      while (i < text.length) {
        const d = text.charCodeAt(i);
        if (d === COMMA || d === CLOSE_OBJECT || d === CLOSE_ARRAY || d <= 0x20) break;
        i++;
      }
      return i;
    }
    let depth = 0;
    for (;;) {
      const d = text.charCodeAt(i);
      if (d === QUOTE) {
        i = this.endOfString(i);
        continue;
      }
      if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth++;
      else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) if (--depth === 0) return i + 1;
      i++;
    }
  }
}

/**
 * Line and column of a `JSON.parse` syntax error, when its message gives the offset ("... in
 * JSON at position N"), with the message without it; undefined otherwise.
 */
export function jsonSyntaxError(text: string, err: Error): { line: number; col: number; message: string } | undefined {
  const m = / in JSON at position (\d+)/.exec(err.message);
  if (m === null) return undefined;
  const offset = Math.min(Number(m[1]), text.length);
  const before = text.lastIndexOf('\n', offset - 1);
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return {
    line,
    col: offset - before,
    message: err.message.replace(m[0], '').replace(/\s+\(line \d+ column \d+\)$/, ''),
  };
}
