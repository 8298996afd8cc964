/**
 * Rules on field filtering (`response` on a route, and `allow`/`deny`/`rename` on each backend of
 * an aggregated route) that the schema cannot express: `allow` and `deny` exclude each other, a
 * dot path has no empty name, two fields are not renamed to one name, and a streamed route has no
 * JSON answer to filter.
 */
import type { AddProblem } from './problems.js';
import { isRecord } from './raw-value.js';

/** Checks every route's `response`. */
export function responseRules(raw: Record<string, unknown>, at: AddProblem): void {
  if (!Array.isArray(raw.routes)) return;
  raw.routes.forEach((route: unknown, index: number) => {
    if (!isRecord(route) || !isRecord(route.response)) return;
    const label = `routes[${index}].response`;
    if (route.isSSE === true || route.isWebSocket === true)
      at(
        ['routes', index, 'response'],
        `${label}: a streaming route (isSSE or isWebSocket) has no JSON answer to filter`,
      );
    fieldRules(route.response, ['routes', index, 'response'], label, at);
  });
}

/** Checks one set of field rules at `where` (the key path of the object holding them). */
export function fieldRules(
  rules: Record<string, unknown>,
  where: readonly (string | number)[],
  label: string,
  at: AddProblem,
): void {
  if (rules.allow !== undefined && rules.deny !== undefined)
    at([...where, 'deny'], `${label}: allow and deny exclude each other; allow keeps only what it lists, so drop deny`);
  for (const key of ['allow', 'deny'] as const) {
    const list = rules[key];
    if (!Array.isArray(list)) continue;
    list.forEach((path: unknown, i: number) => {
      if (typeof path === 'string' && path.split('.').some((name) => name === ''))
        at([...where, key, i], `${label}.${key}: "${path}" has an empty field name (a dot path is a.b.c)`);
    });
  }
  if (isRecord(rules.rename)) {
    const from = new Map<string, string>();
    for (const [old, to] of Object.entries(rules.rename)) {
      if (typeof to !== 'string') continue;
      const first = from.get(to);
      if (first !== undefined)
        at([...where, 'rename', old], `${label}.rename: ${first} and ${old} are both renamed to "${to}"`);
      else from.set(to, old);
    }
  }
}
