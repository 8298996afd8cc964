/**
 * `port: ${PORT:-8080}` substitutes text; where the schema wants a number or boolean at such a
 * path and the text is strictly one (`-?digits[.digits]`, `true`, `false`), it becomes one.
 * Everywhere else the text stays text, so an all-digit secret is still a string.
 */
import { GatewayFileSchema } from './schema.js';
import type { ConfigPath } from './parse.js';

/** The parsed file with the substituted values at `paths` typed as the schema wants them (a copy when any changes). */
export function typeEnvValues(raw: unknown, paths: readonly ConfigPath[]): unknown {
  if (paths.length === 0) return raw;
  const probe = GatewayFileSchema.safeParse(raw);
  if (probe.success) return raw;
  const wanted = new Map<string, string>();
  for (const issue of probe.error.issues) {
    if (issue.code === 'invalid_type' && ['number', 'int', 'boolean'].includes(issue.expected))
      wanted.set(JSON.stringify(issue.path), issue.expected);
  }
  const copy = structuredClone(raw) as Record<string | number, unknown>;
  for (const path of paths) {
    const expected = wanted.get(JSON.stringify(path));
    if (expected === undefined || path.length === 0) continue;
    let parent: Record<string | number, unknown> = copy;
    for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
    const key = path[path.length - 1]!;
    const text = parent[key];
    if (typeof text !== 'string') continue;
    if (expected === 'boolean' && (text === 'true' || text === 'false')) parent[key] = text === 'true';
    else if (expected !== 'boolean' && /^-?\d+(\.\d+)?$/.test(text)) parent[key] = Number(text);
  }
  return copy;
}
