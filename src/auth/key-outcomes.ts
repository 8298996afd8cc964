/**
 * What a key lookup answers (docs/consumers.md "API keys"): the consumer's claims, checked by the
 * route's `require:` rules as a token's would be, or 401 with an `ApiKey` challenge that says where
 * the key goes. Made once per route.
 */
import type { AuthOutcome, ClaimCheck } from './types.js';
import type { ApiKeySource } from './api-key-source.js';
import type { KeyHolder } from './key-store.js';
import { gatewayRefusal, type AuthRefusal } from './refusal.js';

export interface KeyOutcomes {
  /** The outcome for a presented key: its holder's, or 401 for a key no consumer has. */
  of(holder: KeyHolder | undefined): AuthOutcome;
  /** 401 for a request without a key, where no token mode could take it. */
  readonly missing: AuthRefusal;
  /** A token mode's 401 for a missing token, its challenge followed by the key's. */
  withKeyChallenge(tokenMissing: AuthRefusal): AuthRefusal;
}

/** The outcomes of a route's key lookups. */
export function keyOutcomes(source: ApiKeySource, checkClaims: ClaimCheck | undefined): KeyOutcomes {
  const challenge = keyChallenge(source);
  const invalid = gatewayRefusal('GW_AUTH_KEY_INVALID', 'unknown API key', {
    'www-authenticate': `${challenge}, error="invalid_key"`,
  });
  return {
    of(holder) {
      if (holder === undefined) return invalid;
      const why = checkClaims?.(holder.claims);
      if (why !== undefined) return gatewayRefusal('GW_AUTH_FORBIDDEN', why);
      return { ok: true, claimHeaders: holder.claimHeaders, claims: holder.claims };
    },
    missing: gatewayRefusal('GW_AUTH_KEY_MISSING', 'no API key', { 'www-authenticate': challenge }),
    withKeyChallenge(tokenMissing) {
      const bearer = tokenMissing.headers['www-authenticate'];
      const both = bearer === undefined ? challenge : `${bearer}, ${challenge}`;
      return { ...tokenMissing, headers: { ...tokenMissing.headers, 'www-authenticate': both } };
    },
  };
}

/**
 * `ApiKey realm="portico", header="X-API-Key", query="api_key"`: no HTTP scheme is registered for
 * API keys; this is the form of common key-auth libraries, with where to put the key. The names are
 * validated at load (a header name, a query name of unreserved characters), so they need no escaping.
 */
function keyChallenge(source: ApiKeySource): string {
  const where = [
    source.header === undefined ? undefined : `header="${source.header}"`,
    source.query === undefined ? undefined : `query="${source.query}"`,
  ].filter((w) => w !== undefined);
  return ['ApiKey realm="portico"', ...where].join(', ');
}
