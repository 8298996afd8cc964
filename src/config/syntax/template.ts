/**
 * The `{param}` template syntax of route patterns and backend paths: parsed once at config load
 * into literal and placeholder parts. Filling a template is upstream/target-url.ts's work.
 */
import type { Template, TemplatePart } from '../types.js';

const PARAM_NAME = /^[A-Za-z_$][\w$-]*$/;

/** Parses `/users/{id}/posts?x={y}`; returns a message instead when the template is malformed. */
export function parseTemplate(source: string): Template | { error: string } {
  const parts: TemplatePart[] = [];
  const params: string[] = [];
  let i = 0;
  let literal = '';
  while (i < source.length) {
    const c = source[i]!;
    if (c === '}') return { error: `unmatched "}" at position ${i + 1} of "${source}"` };
    if (c !== '{') {
      literal += c;
      i++;
      continue;
    }
    const end = source.indexOf('}', i);
    if (end < 0) return { error: `unclosed "{" at position ${i + 1} of "${source}"` };
    const name = source.slice(i + 1, end);
    if (!PARAM_NAME.test(name))
      return { error: `"{${name}}" is not a valid parameter name (letters, digits, _ and -)` };
    if (literal === '' && parts.length > 0)
      return { error: `parameters {${params[params.length - 1]}} and {${name}} must be separated by text` };
    if (literal) parts.push(literal);
    literal = '';
    parts.push({ param: name });
    params.push(name);
    i = end + 1;
  }
  if (literal) parts.push(literal);
  const q = source.indexOf('?');
  const queryKeys = new Set(
    q < 0
      ? []
      : source
          .slice(q + 1)
          .split('&')
          .filter(Boolean)
          .map(queryKey),
  );
  return { source, parts, params, hasQuery: q >= 0, queryKeys };
}

/** True when `parseTemplate` succeeded. */
export function isTemplate(t: Template | { error: string }): t is Template {
  return !('error' in t);
}

/** The parameters of a template written as `source`, or undefined when it is not one. */
export function templateParams(source: unknown): string[] | undefined {
  if (typeof source !== 'string') return undefined;
  const t = parseTemplate(source);
  return isTemplate(t) ? [...t.params] : undefined;
}

/** The decoded name of one `name=value` query part (`+` is a space in queries). */
export function queryKey(part: string): string {
  const eq = part.indexOf('=');
  const name = eq < 0 ? part : part.slice(0, eq);
  if (!name.includes('%') && !name.includes('+')) return name;
  const raw = name.replaceAll('+', ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
