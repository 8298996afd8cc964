/**
 * A route's header rules (`headers.request` / `headers.response`, docs/header-rules.md): headers
 * removed and set on the way to the backend and on the way back to the client. Compiled once per
 * configuration, when the route's pipeline is built, into lower-case names and value templates
 * (the syntax is config/syntax/headers.ts); a request only fills the templates.
 *
 * Values may hold `{param}` (a path parameter, as decoded by the router) and `{claims.NAME}` (a
 * claim of the valid token; the name as written, else a dot path). A header whose placeholder has
 * no value (no such claim, a claim that is an object) is not set, and a value that cannot be a
 * header (CR, LF and other control characters, more than 4 KiB) is not set either: substituted
 * text comes from the client or the token, and repairing it would let them shape the header.
 * Non-ASCII text is sent as its UTF-8 bytes.
 */
import { claimAt } from '../../pipeline/claims.js';
import { INVALID_VALUE_CHAR, PLACEHOLDER, placeholders } from '../../config/syntax/headers.js';
import type { CompiledHeaderEdit, HeaderValuePart as Part } from '../types.js';
import type { HeaderRules } from '../../config/types.js';
import { foldHeaderName } from '../trust-boundary.js';

/** What a template is filled from. */
export interface HeaderValues {
  readonly params: Readonly<Record<string, string>>;
  readonly claims: Readonly<Record<string, unknown>> | undefined;
}

/** Longest value set from a template or a claim (auth/claim-headers.ts): longer ones would push a backend's header limit. */
export const MAX_HEADER_VALUE_LENGTH = 4096;
const NOT_PRINTABLE_ASCII = /[^\t\x20-\x7e]/;

/** Compiles one side's rules; undefined when there are none. Throws on what `check` refuses. */
export function compileHeaderEdit(rules: HeaderRules | undefined): CompiledHeaderEdit | undefined {
  if (rules === undefined) return undefined;
  const set = Object.entries(rules.set ?? {}).map(
    ([name, value]) => [name.toLowerCase(), compileTemplate(value)] as const,
  );
  const names = [...(rules.remove ?? []).map((n) => n.toLowerCase()), ...set.map(([n]) => n)];
  // Also folded (`_` as `-`, upstream/trust-boundary.ts): removing X-Debug removes X_Debug too.
  const remove = new Set([...names, ...names.map(foldHeaderName)]);
  if (remove.size === 0) return undefined;
  return { remove, set };
}

function compileTemplate(value: string): Part[] {
  const found = placeholders(value);
  if ('error' in found) throw new Error(`unvalidated header template: ${found.error}`);
  const parts: Part[] = [];
  let last = 0;
  let i = 0;
  for (const m of value.matchAll(PLACEHOLDER)) {
    if (m.index > last) parts.push({ text: value.slice(last, m.index) });
    parts.push(found[i++]!);
    last = m.index + m[0].length;
  }
  if (last < value.length) parts.push({ text: value.slice(last) });
  return parts;
}

/** A template filled in, or undefined when a placeholder has no usable value. */
export function fillTemplate(parts: readonly Part[], values: HeaderValues): string | undefined {
  let out = '';
  for (const part of parts) {
    if ('text' in part) out += part.text;
    else if ('param' in part) {
      const v = values.params[part.param];
      if (v === undefined) return undefined;
      out += v;
    } else {
      const v = values.claims === undefined ? undefined : claimText(claimAt(values.claims, part.claim));
      if (v === undefined) return undefined;
      out += v;
    }
  }
  // Header bytes are Latin-1 strings to Node: non-ASCII text goes out as its UTF-8 bytes.
  if (NOT_PRINTABLE_ASCII.test(out)) out = Buffer.from(out, 'utf8').toString('latin1');
  if (out.length > MAX_HEADER_VALUE_LENGTH || INVALID_VALUE_CHAR.test(out)) return undefined;
  return out;
}

/** A claim as header text: strings, numbers and booleans as written, a list of them joined by commas. */
function claimText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((v) => ['string', 'number', 'boolean'].includes(typeof v))
  )
    return value.join(',');
  return undefined;
}

/** Applies rules to a flat `[name, value, ...]` list (a backend request, a 101 answer); returns a new list. */
export function editHeaderList(edit: CompiledHeaderEdit, headers: string[], values: HeaderValues): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    if (!edit.remove.has(foldHeaderName(headers[i]!.toLowerCase()))) out.push(headers[i]!, headers[i + 1]!);
  }
  for (const [name, parts] of edit.set) {
    const value = fillTemplate(parts, values);
    if (value !== undefined) out.push(name, value);
  }
  return out;
}

/** Applies rules in place to the header object a client response is written with. */
export function editHeaderRecord(
  edit: CompiledHeaderEdit,
  headers: Record<string, string | string[]>,
  values: HeaderValues,
): void {
  for (const name of edit.remove) delete headers[name];
  for (const [name, parts] of edit.set) {
    const value = fillTemplate(parts, values);
    if (value !== undefined) headers[name] = value;
  }
}
