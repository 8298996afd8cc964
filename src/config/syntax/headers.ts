/**
 * The syntax of header names and of header value templates, and the headers no rule may touch.
 * It lives in config/ so the schema and the checks need no feature folder; upstream/ and auth/
 * read headers with the same definitions.
 */

/** RFC 9110 5.6.2 token characters: what a header name may hold. */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** What Node and undici accept in a header value (field-vchar, obs-text, SP, HTAB): no CR, LF, NUL. */
export const INVALID_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/** RFC 9110 7.6.1 hop-by-hop headers, plus the legacy ones proxies still see. */
export const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
];

/** `{name}` or `{claims.NAME}` in a header value; anything else between braces is an error at check. */
export const PLACEHOLDER = /\{([^{}]*)\}/g;

/** What a placeholder refers to: a path parameter, or a claim of the valid token. */
export type Placeholder = { readonly param: string } | { readonly claim: string };

/** The placeholders of a value template, in order; an error string for a malformed one. */
export function placeholders(value: string): Placeholder[] | { error: string } {
  const out: Placeholder[] = [];
  for (const m of value.matchAll(PLACEHOLDER)) {
    const inner = m[1]!;
    if (inner.startsWith('claims.') && inner.length > 'claims.'.length) out.push({ claim: inner.slice(7) });
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(inner)) out.push({ param: inner });
    else return { error: `"{${inner}}" is neither {param} nor {claims.NAME}` };
  }
  const rest = value.replace(PLACEHOLDER, '');
  if (rest.includes('{') || rest.includes('}')) return { error: 'an unmatched brace' };
  return out;
}
