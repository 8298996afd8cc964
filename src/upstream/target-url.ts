/**
 * `{param}` templates, parsed once at config load into literal and placeholder parts, and the
 * URL builders made from them. Every substituted value is percent-encoded, so a value can never
 * change the structure of the backend path or query (docs/design-decisions.md "HTTP behaviour").
 */

export type TemplatePart = string | { readonly param: string };

export interface Template {
  readonly source: string;
  readonly parts: readonly TemplatePart[];
  /** Placeholder names in order of appearance (may repeat). */
  readonly params: readonly string[];
  /** True when the template already holds a `?`: client query is then appended with `&`. */
  readonly hasQuery: boolean;
  /** Names of the query parameters the template writes itself (decoded); empty without a query. */
  readonly queryKeys: ReadonlySet<string>;
}

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

export function isTemplate(t: Template | { error: string }): t is Template {
  return !('error' in t);
}

/** The parameters of a template written as `source`, or undefined when it is not one. */
export function templateParams(source: unknown): string[] | undefined {
  if (typeof source !== 'string') return undefined;
  const t = parseTemplate(source);
  return isTemplate(t) ? [...t.params] : undefined;
}

/**
 * Percent-encodes one substituted value. encodeURIComponent leaves `.` alone, so a value that is
 * only dots (`.` or `..`) would still be a path segment a backend may normalise: encode those too.
 */
export function encodeValue(value: string): string {
  const encoded = encodeURIComponent(value);
  return /^\.+$/.test(encoded) ? encoded.replaceAll('.', '%2E') : encoded;
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

export type UrlBuilder = (values: Readonly<Record<string, string>>) => string;

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
 * Appends the client's raw query string after any query the template itself wrote. A client
 * parameter with the same name as one the template sets is dropped: `/users?companyId={id}` must
 * not become `?companyId=7&companyId=9`, which many frameworks read as 9 (or as a list). The
 * template's names are known at config load (`Template.queryKeys`).
 */
export function appendQuery(
  path: string,
  template: Pick<Template, 'hasQuery' | 'queryKeys'>,
  rawQuery: string,
): string {
  if (rawQuery === '') return path;
  if (!template.hasQuery) return `${path}?${rawQuery}`;
  const own = template.queryKeys;
  let out = path;
  for (const part of rawQuery.split('&')) {
    if (part !== '' && !own.has(queryKey(part))) out += `&${part}`;
  }
  return out;
}

/** The decoded name of one `name=value` query part (`+` is a space in queries). */
function queryKey(part: string): string {
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
