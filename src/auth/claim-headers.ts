/**
 * Claims become backend request headers (docs/design-decisions.md "Auth"): every string claim
 * `name` is sent as `X-<name>`. A claim that cannot be a header (a name with non-token characters,
 * a value with CR, LF or other control characters) is skipped, never repaired: repairing would let a
 * token holder shape the headers a backend trusts. The caller logs what was skipped.
 */
import { HEADER_NAME, INVALID_VALUE_CHAR } from '../config/syntax/headers.js';
import { MAX_HEADER_VALUE_LENGTH } from '../upstream/headers/header-edits.js';
import { foldHeaderName, isReservedForClaims } from '../upstream/trust-boundary.js';

/** Why a claim was not turned into a header. */
export type SkippedClaim = {
  readonly claim: string;
  readonly reason: 'name' | 'value' | 'reserved' | 'duplicate' | 'too-long';
};

/** Longer values would push the backend's header limit (commonly 8-16 KiB in total). */
export const MAX_CLAIM_VALUE_LENGTH = MAX_HEADER_VALUE_LENGTH;
/**
 * The `X-<claim>` headers for the string claims of `claims`, at most one per name (case-insensitive,
 * `_` read as `-`). A name the gateway sets, or only a trusted proxy may send, or that overrides
 * the method (upstream/trust-boundary.ts), or the client-certificate subject header, is skipped.
 * @example claimHeaders({ sub: 'u1', role: 'admin', exp: 1 }) // [['X-sub','u1'], ['X-role','admin']]
 */
export function claimHeaders(
  claims: Readonly<Record<string, unknown>>,
  skipped?: SkippedClaim[],
  clientSubjectHeader?: string,
): [string, string][] {
  const out: [string, string][] = [];
  let seen: Set<string> | undefined;
  for (const claim in claims) {
    const value = claims[claim];
    // String claims only; numbers (exp, iat), booleans, arrays and objects are not sent.
    if (typeof value !== 'string') continue;
    const skip = (reason: SkippedClaim['reason']) => skipped?.push({ claim, reason });
    if (!HEADER_NAME.test(claim)) {
      skip('name');
      continue;
    }
    if (value.length > MAX_CLAIM_VALUE_LENGTH) {
      skip('too-long');
      continue;
    }
    if (INVALID_VALUE_CHAR.test(value)) {
      skip('value');
      continue;
    }
    const name = `X-${claim}`;
    const lower = foldHeaderName(name.toLowerCase());
    if (isReservedForClaims(lower, clientSubjectHeader)) {
      skip('reserved');
      continue;
    }
    seen ??= new Set();
    if (seen.has(lower)) {
      skip('duplicate');
      continue;
    }
    seen.add(lower);
    out.push([name, value]);
  }
  return out;
}

/** Narrows a parsed JSON value to a claims object (a plain object, not an array or null). */
export function isClaimsObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
