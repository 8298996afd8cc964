/**
 * The URL builders made from `{param}` templates (parsed at config load, config/syntax/template.ts).
 * Every substituted value is percent-encoded, so a value can never change the structure of the
 * backend path or query (docs/design-decisions.md "HTTP behaviour").
 */
import type { Template } from '../config/types.js';
import { queryKey } from '../config/syntax/template.js';
import type { UrlBuilder } from './types.js';
import { mayOverrideMethod, queryPartPasses } from './trust-boundary.js';

/** The characters encodeURIComponent leaves as they are (`\w` is ASCII letters, digits and `_`). */
const UNESCAPED = /^[\w.!~*'()-]*$/;
const ONLY_DOTS = /^\.+$/;

/**
 * Percent-encodes one substituted value. encodeURIComponent leaves `.` alone, so a value that is
 * only dots (`.` or `..`) would still be a path segment a backend may normalise: encode those too.
 */
export function encodeValue(value: string): string {
  // Most values (ids, numbers, slugs) hold only what encodeURIComponent leaves alone: no new string.
  if (!UNESCAPED.test(value)) return encodeURIComponent(value);
  return ONLY_DOTS.test(value) ? value.replaceAll('.', '%2E') : value;
}

/**
 * True when a decoded value would act as a dot-segment once a backend decodes and normalises the
 * path it is placed in: the whole value is `.` or `..`, or a `..` stands between separators
 * (`/` or `\\`, which some servers treat alike). Such values are refused, not encoded: many
 * backends decode `%2E%2E` and `%2F` before they normalise, so encoding alone does not protect.
 */
export function isDotSegmentValue(value: string): boolean {
  if (value === '.' || value === '..') return true;
  let from = value.indexOf('..');
  while (from >= 0) {
    const before = from === 0 ? '/' : value[from - 1];
    const after = from + 2 === value.length ? '/' : value[from + 2];
    if ((before === '/' || before === '\\') && (after === '/' || after === '\\')) return true;
    from = value.indexOf('..', from + 1);
  }
  return false;
}

/**
 * A function that fills the template with encoded values. Built once per template; the
 * hot path does one string concatenation per part.
 */
export function compileUrlBuilder(t: Template): UrlBuilder {
  if (t.params.length === 0) {
    const fixed = t.source;
    return () => fixed;
  }
  const parts = t.parts;
  return (values) => {
    let out = '';
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      out += typeof p === 'string' ? p : encodeValue(values[p.param] ?? '');
    }
    return out;
  };
}

/**
 * The URL builder of a prefix route's backend path (`/files/*`): the `*` takes the rest of the
 * client path, which the router already made safe and encoded segment by segment
 * (router/prefix-rest.ts, under the key `*`); the `{param}`s are filled as in any template.
 */
export function compileRestUrlBuilder(t: Template): UrlBuilder {
  const parts: (string | { param: string; rest?: true })[] = [];
  let seen = false;
  for (const p of t.parts) {
    const star = typeof p === 'string' && !seen ? starBeforeQuery(p) : -1;
    if (typeof p !== 'string' || star < 0) parts.push(p);
    else {
      seen = true;
      if (star > 0) parts.push(p.slice(0, star));
      parts.push({ param: '*', rest: true });
      if (star < p.length - 1) parts.push(p.slice(star + 1));
    }
  }
  return (values) => {
    let out = '';
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      out += typeof p === 'string' ? p : p.rest ? (values['*'] ?? '') : encodeValue(values[p.param] ?? '');
    }
    return out;
  };
}

/** The `*` of a literal part when it stands before any query (a `*` after `?` is query text). */
function starBeforeQuery(literal: string): number {
  const star = literal.indexOf('*');
  const q = literal.indexOf('?');
  return q >= 0 && q < star ? -1 : star;
}

/**
 * Appends the client's raw query string after any query the template itself wrote, less what the
 * trust boundary keeps from backends (upstream/trust-boundary.ts): a parameter the template sets,
 * in any spelling (`/users?companyId={id}` must not become `?companyId=7&companyId[]=9`, which
 * many frameworks read as 9 or as a list), and a `_method` override. The template's names are
 * known at config load (`Template.queryKeys`); most queries are appended as they came.
 */
export function appendQuery(
  path: string,
  template: Pick<Template, 'hasQuery' | 'queryKeys'>,
  rawQuery: string,
): string {
  if (rawQuery === '') return path;
  if (!template.hasQuery && !mayOverrideMethod(rawQuery)) return `${path}?${rawQuery}`;
  const own = template.queryKeys;
  let out = path;
  let separator = template.hasQuery ? '&' : '?';
  for (const part of rawQuery.split('&')) {
    if (part === '' || !queryPartPasses(queryKey(part), own)) continue;
    out += separator + part;
    separator = '&';
  }
  return out;
}
