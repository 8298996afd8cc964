/**
 * Field filtering of a JSON answer (`response.allow` / `deny` / `rename` on a route, and the same
 * keys on each backend of an aggregated route): docs/field-filtering.md.
 *
 * - `allow`: only these fields are kept; `deny`: these fields are dropped. A dot path
 *   (`user.address.city`) reaches into nested objects, and into each object of a nested array.
 * - `rename`: top-level fields get a new name (old -> new), after allow/deny. A renamed field
 *   replaces a field that already had the new name.
 * The rules apply to a body that is an object, or to each object of a body that is an array of
 * objects; anything else is left as it is. Like mapping, the filter works on the text
 * (mapping/json-scan.ts): the values it keeps are copied byte for byte, so numbers past 2^53 and
 * string escapes survive; only the whitespace between the kept members of a filtered object is not.
 *
 * Design note (docs/field-filtering.md "Cost"): the text is validated and filtered in one
 * pass, with no value built: a member the rules do not reach is skipped by the scanner and copied
 * as one slice, a dropped one is skipped and never copied, and only the members a rule names are
 * descended into. The output is one string grown by concatenation (V8 keeps it as a rope until it
 * is written out). JSON.parse + JSON.stringify would lose big numbers and rewrite escapes.
 */
import { Scanner, fail, scanOrUndefined, stringValue } from './json-scan.js';
import type { FieldRules } from '../config/types.js';
import { hasFieldRules } from '../config/syntax/field-rules.js';
import type { FieldFilter } from '../pipeline/types.js';

/** The fields a rule names, as a tree: `true` for a whole field, a subtree for some of its fields. */
type PathTree = ReadonlyMap<string, PathTree | true>;

/**
 * One depth of the rules, as the scan reads it: the names it knows, compared in place against a
 * key's text (a handful of names cost less than making each key a string and hashing it).
 */
interface Level {
  readonly names: readonly string[];
  /** `rules[i]`: what allow/deny say of `names[i]` (undefined: nothing). */
  readonly rules: readonly (Level | true | undefined)[];
  /** Top level: `keys[i]` is the JSON key (`"fullName":`) written for a renamed `names[i]`. */
  readonly keys: readonly (string | undefined)[];
  /** Top level: `targets[i]` is the index of the new name of `names[i]`, -1 when it keeps its name. */
  readonly targets: readonly number[];
  /** For a level with many names: index by name. */
  readonly byName: ReadonlyMap<string, number> | undefined;
}

/** Past this many names at one depth, a key is looked up in a map rather than compared. */
const COMPARED_NAMES = 8;

interface Compiled {
  readonly top: Level;
  /** True when the rules list what is kept (`allow`), false when they list what goes (`deny`). */
  readonly allow: boolean;
  readonly hasRename: boolean;
}

/**
 * Compiles the rules once per configuration; undefined when there is nothing to do.
 * @example compileFieldFilter({ deny: ['password'] })!('{"id":1,"password":"x"}') // '{"id":1}'
 */
export function compileFieldFilter(rules: FieldRules | undefined): FieldFilter | undefined {
  if (!hasFieldRules(rules)) return undefined;
  const paths = rules.allow ?? rules.deny ?? [];
  const rename = new Map(Object.entries(rules.rename ?? {}));
  const c: Compiled = {
    top: level(pathTree(paths), rename),
    allow: rules.allow !== undefined,
    hasRename: rename.size > 0,
  };
  return (text) => scanOrUndefined(() => new FilterScan(text, c).body());
}

function pathTree(paths: readonly string[]): PathTree {
  const root = new Map<string, Map<string, unknown> | true>();
  for (const path of paths) {
    const names = path.split('.');
    let at = root;
    names.forEach((name, i) => {
      const seen = at.get(name);
      if (seen === true) return;
      if (i === names.length - 1) {
        at.set(name, true);
        return;
      }
      const next = seen ?? new Map<string, Map<string, unknown> | true>();
      at.set(name, next);
      at = next as typeof root;
    });
  }
  return root as PathTree;
}

function level(tree: PathTree, rename: ReadonlyMap<string, string>): Level {
  const names = [...new Set([...tree.keys(), ...rename.keys(), ...rename.values()])];
  const index = new Map(names.map((n, i) => [n, i]));
  return {
    names,
    rules: names.map((n) => {
      const rule = tree.get(n);
      return rule === undefined || rule === true ? rule : level(rule, new Map());
    }),
    keys: names.map((n) => (rename.has(n) ? `${JSON.stringify(rename.get(n))}:` : undefined)),
    targets: names.map((n) => {
      const to = rename.get(n);
      return to === undefined || to === n ? -1 : index.get(to)!;
    }),
    byName: names.length > COMPARED_NAMES ? index : undefined,
  };
}

/** One filtering pass over a body; `p` is where the scan is between the methods. */
class FilterScan extends Scanner {
  private p = 0;

  constructor(
    text: string,
    private readonly c: Compiled,
  ) {
    super(text);
  }

  /** The filtered body: an object, or an array of objects with the text between items kept. */
  body(): string {
    const t = this.text;
    const top = this.c.top;
    let p = this.ws(0);
    let out = '';
    let cursor = 0;
    const c = t.charCodeAt(p);
    if (c === 0x7b /* { */) {
      out = t.slice(0, p) + this.filtered(p, top, this.c.hasRename);
      cursor = p = this.p;
    } else if (c === 0x5b /* [ */) {
      p = this.ws(p + 1);
      if (t.charCodeAt(p) === 0x5d /* ] */) p++;
      else {
        for (;;) {
          if (t.charCodeAt(p) !== 0x7b /* { */) fail();
          out += t.slice(cursor, p) + this.filtered(p, top, this.c.hasRename);
          cursor = this.p;
          p = this.elementAfter(cursor);
          if (p < 0) {
            p = this.listEnd;
            break;
          }
        }
      }
    } else fail();
    if (this.ws(p) !== t.length) fail();
    return out + t.slice(cursor);
  }

  /**
   * The object at `start` rebuilt from its kept members (`at`: the rules at this depth; `renames`:
   * the top level of rules with `rename`); leaves `p` after its `}`.
   */
  private filtered(start: number, at: Level, renames: boolean): string {
    const t = this.text;
    const { allow } = this.c;
    let p = this.ws(start + 1);
    if (t.charCodeAt(p) === 0x7d /* } */) {
      this.p = p + 1;
      return '{}';
    }
    let out = '';
    // With renames, the members are assembled at the end: a field renamed onto an existing name
    // replaces it, wherever the two stand. `owners[k]`: the name index of pieces[k] that such a
    // rename drops (-1: none).
    let owners: number[] | undefined;
    let pieces: string[] | undefined;
    let replaced: boolean[] | undefined;
    for (;;) {
      const keyStart = p;
      const valueStart = this.memberHead(p);
      const i = this.match(at, keyStart, this.keyEnd);
      const rule = i < 0 ? undefined : at.rules[i];
      const kept = allow ? rule !== undefined : rule !== true;
      let piece: string | undefined;
      if (!kept) p = this.skipValue(valueStart);
      else if (rule === undefined || rule === true) {
        p = this.skipValue(valueStart);
        piece = t.slice(keyStart, p);
      } else {
        const value = this.nested(valueStart, rule);
        p = this.p;
        if (value !== undefined) piece = t.slice(keyStart, valueStart) + value;
      }
      if (renames) {
        const target = i < 0 ? -1 : at.targets[i]!;
        // Kept by allow/deny (even if its value went): its new name replaces an existing field.
        if (target >= 0 && kept) (replaced ??= [])[target] = true;
        if (piece !== undefined) {
          const key = i < 0 ? undefined : at.keys[i];
          if (key !== undefined) piece = key + piece.slice(valueStart - keyStart);
          (owners ??= []).push(target >= 0 ? -1 : i);
          (pieces ??= []).push(piece);
        }
      } else if (piece !== undefined) out += out === '' ? piece : ',' + piece;
      p = this.ws(p);
      const d = t.charCodeAt(p);
      if (d === 0x2c /* , */) p = this.ws(p + 1);
      else if (d === 0x7d /* } */) break;
      else fail();
    }
    this.p = p + 1;
    if (pieces !== undefined) {
      for (let k = 0; k < pieces.length; k++) {
        const owner = owners![k]!;
        if (replaced !== undefined && owner >= 0 && replaced[owner] === true) continue;
        out += out === '' ? pieces[k] : ',' + pieces[k];
      }
    }
    return `{${out}}`;
  }

  /** The index in `at.names` of the key `[keyStart, keyEnd)` (quotes included) `memberHead` just read, or -1. */
  private match(at: Level, keyStart: number, keyEnd: number): number {
    const t = this.text;
    if (this.keyEscaped || at.byName !== undefined) {
      const name = stringValue(t, keyStart, keyEnd);
      return at.byName !== undefined ? (at.byName.get(name) ?? -1) : at.names.indexOf(name);
    }
    const length = keyEnd - keyStart - 2;
    const names = at.names;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      if (name.length === length && t.startsWith(name, keyStart + 1)) return i;
    }
    return -1;
  }

  /**
   * A value under a subtree of rules: an object, or each object of an array of objects, filtered.
   * Anything else has no fields to pick: dropped under `allow` (undefined), kept under `deny`.
   * Leaves `p` after the value.
   */
  private nested(start: number, at: Level): string | undefined {
    const t = this.text;
    const c = t.charCodeAt(start);
    if (c === 0x7b /* { */) return this.filtered(start, at, false);
    if (c === 0x5b /* [ */) {
      let p = this.ws(start + 1);
      if (t.charCodeAt(p) === 0x5d /* ] */) {
        this.p = p + 1;
        return '[]';
      }
      let out = '[';
      for (;;) {
        if (t.charCodeAt(p) !== 0x7b /* { */) break;
        out += this.filtered(p, at, false);
        p = this.ws(this.p);
        const d = t.charCodeAt(p);
        if (d === 0x2c /* , */) {
          out += ',';
          p = this.ws(p + 1);
        } else if (d === 0x5d /* ] */) {
          this.p = p + 1;
          return out + ']';
        } else fail();
      }
      // Not an array of objects: the whole array is left alone (its text validated from the start).
    }
    this.p = this.skipValue(start);
    return this.c.allow ? undefined : t.slice(start, this.p);
  }
}
