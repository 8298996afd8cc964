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
 */
import { scanItems, type ObjectSpan } from './json-scan.js';
import type { FieldRules } from '../config/types.js';
import { hasFieldRules } from '../config/syntax/field-rules.js';
import type { FieldFilter } from '../pipeline/types.js';

/** The fields a rule names, as a tree: `true` for a whole field, a subtree for some of its fields. */
type PathTree = ReadonlyMap<string, PathTree | true>;

interface Compiled {
  readonly allow: PathTree | undefined;
  readonly deny: PathTree | undefined;
  readonly rename: ReadonlyMap<string, string> | undefined;
}

/**
 * Compiles the rules once per configuration; undefined when there is nothing to do.
 * @example compileFieldFilter({ deny: ['password'] })!('{"id":1,"password":"x"}') // '{"id":1}'
 */
export function compileFieldFilter(rules: FieldRules | undefined): FieldFilter | undefined {
  if (!hasFieldRules(rules)) return undefined;
  const c: Compiled = {
    allow: rules.allow === undefined ? undefined : pathTree(rules.allow),
    deny: rules.deny === undefined || rules.deny.length === 0 ? undefined : pathTree(rules.deny),
    rename:
      rules.rename === undefined || Object.keys(rules.rename).length === 0
        ? undefined
        : new Map(Object.entries(rules.rename)),
  };
  return (text) => {
    const items = scanItems(text);
    if (items === undefined) return undefined;
    const parts: string[] = [];
    let cursor = 0;
    for (const item of items) {
      parts.push(text.slice(cursor, item.start), filterObject(text, item, c.allow, c.deny, c.rename));
      cursor = item.end;
    }
    parts.push(text.slice(cursor));
    return parts.join('');
  };
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

/** One object rebuilt from its kept members. */
function filterObject(
  text: string,
  span: ObjectSpan,
  allow: PathTree | undefined,
  deny: PathTree | undefined,
  rename: ReadonlyMap<string, string> | undefined,
): string {
  // A field renamed onto an existing name replaces it: the existing one is dropped.
  let replaced: Set<string> | undefined;
  if (rename !== undefined) {
    for (const m of span.members) {
      const to = rename.get(m.name);
      if (to !== undefined && to !== m.name && kept(m.name, allow, deny)) (replaced ??= new Set()).add(to);
    }
  }
  const out: string[] = [];
  for (const m of span.members) {
    const a = allow?.get(m.name);
    if (allow !== undefined && a === undefined) continue;
    const d = deny?.get(m.name);
    if (d === true) continue;
    const to = rename?.get(m.name);
    if (replaced !== undefined && replaced.has(m.name) && (to === undefined || to === m.name)) continue;
    let value: string | undefined = text.slice(m.valueStart, m.valueEnd);
    if (a !== undefined && a !== true) value = nested(value, m.kind, a, undefined);
    else if (d !== undefined) value = nested(value, m.kind, undefined, d);
    if (value === undefined) continue;
    const key = to === undefined ? text.slice(m.keyStart, m.valueStart) : `${JSON.stringify(to)}:`;
    out.push(key + value);
  }
  return `{${out.join(',')}}`;
}

function kept(name: string, allow: PathTree | undefined, deny: PathTree | undefined): boolean {
  return (allow === undefined || allow.has(name)) && deny?.get(name) !== true;
}

/**
 * A nested value under a subtree of rules: an object, or each object of an array of objects.
 * Anything else has no fields to pick: dropped under `allow`, kept under `deny`.
 */
function nested(
  value: string,
  kind: string,
  allow: PathTree | undefined,
  deny: PathTree | undefined,
): string | undefined {
  const unchanged = allow === undefined ? value : undefined;
  if (kind !== 'object' && kind !== 'array') return unchanged;
  const items = scanItems(value);
  if (items === undefined) return unchanged;
  const filtered = items.map((item) => filterObject(value, item, allow, deny, undefined));
  return kind === 'object' ? filtered[0] : `[${filtered.join(',')}]`;
}
