/**
 * Reading the verified token's claims on the exchange (`ex.claims`), as `require:` rules and
 * header rules (`{claims.NAME}`) name them.
 */

/** The claim called `name`, else the value at the dot path `name`; undefined when absent. */
export function claimAt(claims: Readonly<Record<string, unknown>>, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  if (!name.includes('.')) return undefined;
  let at: unknown = claims;
  for (const part of name.split('.')) {
    if (typeof at !== 'object' || at === null || Array.isArray(at) || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}
