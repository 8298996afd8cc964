/**
 * What an introspection endpoint's answer (RFC 7662 2.2) means for the request. Only a 200 whose
 * body is a JSON object with a boolean `active` is an answer: `active: true` admits the request
 * with the object's fields as its claims, `active: false` is an invalid token (401, like a bad
 * JWT). Anything else (another status, a body that is not such an object) means the gateway could
 * not learn whether the token is valid: 503, never "inactive", so an endpoint in trouble is not
 * mistaken for a wave of bad tokens and is never remembered as such.
 *
 * Beside the endpoint's verdict the gateway applies the checks it applies to a JWT where the
 * answer carries the claim: `exp` (with `clockToleranceSec`, in case the endpoint's clock lags),
 * and `iss` / `aud` when `config.auth.issuer` / `audience` are set (RFC 7662 4: a resource
 * server should check that the token was meant for it).
 */
import type { AuthOutcome } from './types.js';
import { isClaimsObject } from './claim-headers.js';
import { gatewayRefusal } from './refusal.js';

/** RFC 6750 3: the scheme and why the token failed. */
export const INVALID_TOKEN_HEADERS = { 'www-authenticate': 'Bearer realm="portico", error="invalid_token"' };

/** The JWT-like checks applied to an active answer (config.auth). */
export interface AnswerChecks {
  readonly issuer: string | readonly string[] | undefined;
  readonly audience: string | readonly string[] | undefined;
  readonly clockToleranceSec: number;
}

/** The endpoint's verdict: the claims of an active token, or a refusal to answer. */
export type IntrospectionVerdict =
  | { readonly active: true; readonly claims: Readonly<Record<string, unknown>> }
  | { readonly active: false; readonly refusal: Extract<AuthOutcome, { ok: false }> };

/**
 * Reads a 200 answer's body. `nowSec`: the gateway's clock in whole seconds.
 * @example readIntrospectionAnswer(Buffer.from('{"active":false}'), checks, nowSec) // 401 GW_AUTH_INVALID
 */
export function readIntrospectionAnswer(body: Buffer, checks: AnswerChecks, nowSec: number): IntrospectionVerdict {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (!isClaimsObject(parsed) || typeof parsed.active !== 'boolean')
    return refused('GW_AUTH_UNAVAILABLE', 'introspection answer is not a JSON object with a boolean "active"');
  if (!parsed.active) return refused('GW_AUTH_INVALID', 'token inactive (introspection)');
  const exp = parsed.exp;
  if (exp !== undefined && typeof exp !== 'number')
    return refused('GW_AUTH_UNAVAILABLE', 'introspection answer has an "exp" that is not a number');
  if (exp !== undefined && exp <= nowSec - checks.clockToleranceSec)
    return refused('GW_AUTH_INVALID', 'token expired (introspection answered active with an exp in the past)');
  const why = claimMismatch(parsed, checks);
  if (why !== undefined) return refused('GW_AUTH_INVALID', why);
  return { active: true, claims: parsed };
}

/** Why `iss` or `aud` does not match the configured values, if they do not. */
function claimMismatch(claims: Record<string, unknown>, checks: AnswerChecks): string | undefined {
  if (checks.issuer !== undefined) {
    const accepted = typeof checks.issuer === 'string' ? [checks.issuer] : checks.issuer;
    if (typeof claims.iss !== 'string' || !accepted.includes(claims.iss))
      return 'unexpected "iss" in the introspection answer';
  }
  if (checks.audience !== undefined) {
    const accepted = typeof checks.audience === 'string' ? [checks.audience] : checks.audience;
    // RFC 7662 2.2: `aud` is a string or an array of strings, as in a JWT (RFC 7519 4.1.3).
    const aud: unknown[] = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!aud.some((a) => typeof a === 'string' && accepted.includes(a)))
      return 'unexpected "aud" in the introspection answer';
  }
  return undefined;
}

function refused(code: 'GW_AUTH_INVALID' | 'GW_AUTH_UNAVAILABLE', detail: string): IntrospectionVerdict {
  return {
    active: false,
    refusal: gatewayRefusal(code, detail, code === 'GW_AUTH_INVALID' ? INVALID_TOKEN_HEADERS : undefined),
  };
}
