/**
 * Reading the parsed YAML before it is validated: every value is `unknown` there, and these
 * helpers are the only places that look into it.
 */

/** A YAML mapping (not a list, not null). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The value at `path` in the parsed file, or undefined when any step is missing. */
export function valueAt(raw: unknown, path: readonly (string | number | symbol)[]): unknown {
  let v = raw;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[k as string | number];
  }
  return v;
}

/** `routes[0].mapping[1].path`: a key path as the messages name it. */
export function formatPath(path: readonly (string | number | symbol)[]): string {
  let out = '';
  for (const k of path) out += typeof k === 'number' ? `[${k}]` : out ? `.${String(k)}` : String(k);
  return out;
}
