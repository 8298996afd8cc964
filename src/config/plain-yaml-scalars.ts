/**
 * The scalars and flow collections of config/plain-yaml.ts: how an unquoted scalar resolves, and
 * where the parts of a one-line flow collection start. Whatever is outside the plain subset
 * throws NOT_PLAIN, which the reader turns into "read it with the YAML library".
 */

/** Thrown inside the reader when the text leaves the subset; never escapes readPlainYaml. */
export const NOT_PLAIN = Symbol('not plain YAML');

export function fail(): never {
  throw NOT_PLAIN;
}

/**
 * A plain scalar that YAML's core schema reads as a string: starts with a letter, `_` or `/`, no
 * spaces, and a `:` only before another character (`sha256:…`, `https://…`, `/files/*`). Outside
 * a flow collection it may hold braces too (`/users/{id}`), which inside one would end it.
 */
const PLAIN = /^[A-Za-z_/][A-Za-z0-9_./@+~=*{}-]*(?::[A-Za-z0-9_./@+~=*{}-]+)*$/;
const PLAIN_IN_FLOW = /^[A-Za-z_/][A-Za-z0-9_./@+~=*-]*(?::[A-Za-z0-9_./@+~=*-]+)*$/;
/**
 * The YAML 1.2 core schema's booleans, nulls and decimal numbers, with the tests and conversions
 * of the yaml library's core tags (yaml/dist/schema/core), so that a value read here is the one it
 * gives (property-tested in plain-yaml.test.ts). Hex, octal, `.inf` and `.nan` are left to it.
 */
const BOOLEAN = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const NULL = /^(?:~|[Nn]ull|NULL)$/;
const INT = /^[-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;

/** The value of an unquoted scalar, as the core schema resolves it. */
export function plainScalar(text: string, inFlow: boolean): unknown {
  if (BOOLEAN.test(text)) return text[0] === 't' || text[0] === 'T';
  if (NULL.test(text)) return null;
  if (INT.test(text)) return parseInt(text, 10);
  if (FLOAT.test(text)) return parseFloat(text);
  if (!(inFlow ? PLAIN_IN_FLOW : PLAIN).test(text)) fail();
  return text;
}

/**
 * The comma-separated parts of a flow collection's inside, trimmed, with their columns (from 1);
 * `col`: the inside's. A comma inside quotes or inside a nested collection does not separate.
 */
export function flowParts(inside: string, col: number): { text: string; col: number }[] {
  if (inside.trim() === '') return [];
  const parts: { text: string; col: number }[] = [];
  const push = (from: number, to: number) => {
    const raw = inside.slice(from, to);
    const text = raw.trim();
    // A trailing comma, or an empty part, is left to the library.
    if (text === '') fail();
    parts.push({ text, col: col + from + raw.length - raw.trimStart().length });
  };
  let from = 0;
  let open = 0;
  let quote: string | undefined;
  for (let i = 0; i < inside.length; i++) {
    const c = inside[i];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '{') open++;
    else if (c === ']' || c === '}') {
      if (--open < 0) fail();
    } else if (c === ',' && open === 0) {
      push(from, i);
      from = i + 1;
    }
  }
  if (quote !== undefined || open !== 0) fail();
  push(from, inside.length);
  return parts;
}
