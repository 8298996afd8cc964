/**
 * Authorization rules (a route's `require:`), compiled once per configuration, when the route's
 * pipeline is built, into one check on the claims an authenticator returned. The rules, as
 * docs/authorization.md states them:
 * - `roles`: the token holds at least one of them, in the claim `auth.rolesClaim` names (else
 *   `roles`, then `role`), a string or a list of strings;
 * - `scopes`: the token holds every one of them, in `scope` or `scp` (a space-separated string or
 *   a list of strings), as OAuth 2.0 scopes are granted;
 * - `claims`: each named claim equals the value, or one of the values of a list; a list claim in
 *   the token matches when it holds one of them.
 * A claim name is looked up as written first (namespaced claims such as
 * `https://example.com/roles` hold dots), then as a dot path into nested objects
 * (`realm_access.roles`).
 */
import type { ClaimCheck } from './types.js';
import { claimAt } from '../pipeline/claims.js';

export type ClaimValue = string | number | boolean;

export interface Requirements {
  readonly roles?: readonly string[] | undefined;
  readonly scopes?: readonly string[] | undefined;
  readonly claims?: Readonly<Record<string, ClaimValue | readonly ClaimValue[]>> | undefined;
}

const DEFAULT_ROLE_CLAIMS = ['roles', 'role'] as const;
const SCOPE_CLAIMS = ['scope', 'scp'] as const;

/**
 * @example
 * const check = compileRequirements({ roles: ['admin'] }, undefined);
 * check({ sub: 'u1', roles: ['user'] }) // 'no role among admin'
 */
export function compileRequirements(rules: Requirements, rolesClaim: string | undefined): ClaimCheck {
  const checks: ClaimCheck[] = [];
  if (rules.roles !== undefined && rules.roles.length > 0) {
    const wanted = new Set(rules.roles);
    const names = rolesClaim === undefined ? DEFAULT_ROLE_CLAIMS : [rolesClaim];
    const list = [...wanted].join(', ');
    checks.push((claims) => {
      for (const name of names) {
        const held = claimAt(claims, name);
        if (held === undefined) continue;
        return strings(held, false).some((r) => wanted.has(r)) ? undefined : `no role among ${list}`;
      }
      return `no role among ${list}`;
    });
  }
  if (rules.scopes !== undefined && rules.scopes.length > 0) {
    const wanted = [...new Set(rules.scopes)];
    checks.push((claims) => {
      const held = new Set<string>();
      for (const name of SCOPE_CLAIMS) for (const s of strings(claimAt(claims, name), true)) held.add(s);
      const missing = wanted.filter((s) => !held.has(s));
      return missing.length === 0 ? undefined : `scope ${missing.join(', ')} missing`;
    });
  }
  for (const [name, expected] of Object.entries(rules.claims ?? {})) {
    const accepted = new Set<unknown>(Array.isArray(expected) ? expected : [expected]);
    checks.push((claims) => {
      const held = claimAt(claims, name);
      const values: readonly unknown[] = Array.isArray(held) ? held : [held];
      return values.some((v) => accepted.has(v)) ? undefined : `claim ${name} does not match`;
    });
  }
  if (checks.length === 1) return checks[0]!;
  return (claims) => {
    for (const check of checks) {
      const why = check(claims);
      if (why !== undefined) return why;
    }
    return undefined;
  };
}

/** The strings a claim holds: a list's strings, or one string (split on spaces for scopes). */
function strings(value: unknown, spaceSeparated: boolean): string[] {
  if (typeof value === 'string') return spaceSeparated ? value.split(' ').filter((s) => s !== '') : [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}
