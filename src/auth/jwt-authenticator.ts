/**
 * Bearer JWT validation shared by local mode (HMAC secret) and JWKS mode: the two differ only in
 * where keys come from and which algorithms they accept. The accepted algorithms are pinned per
 * mode, which is what defeats algorithm confusion (an RS256 token against a secret, an HS256 token
 * signed with a public key against a JWKS); jose never accepts `alg: none` in jwtVerify. Time
 * claims: `exp` and `nbf` (jose), and `iat`, which may not lie in the future either.
 */
import { jwtVerify, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import type { Logger } from '../observability/logger.js';
import type { Authenticator, AuthOutcome } from './types.js';
import { claimHeaders, type SkippedClaim } from './claim-headers.js';
import { gatewayRefusal } from './refusal.js';
import { createTokenCache, type AuthSuccess, type TokenCache } from './token-cache.js';

/** The claim checks and clock every JWT mode shares (config.auth). */
export interface JwtCheckOptions {
  readonly issuer: string | readonly string[] | undefined;
  readonly audience: string | readonly string[] | undefined;
  readonly clockToleranceSec: number;
  readonly logger: Logger;
  /** `tls.clientSubjectHeader`: no claim header may take its name. */
  readonly clientSubjectHeader?: string | undefined;
  /** Milliseconds since the epoch; injected by tests to check exp/nbf without sleeping. */
  readonly now?: () => number;
}

export interface JwtAuthenticatorOptions extends JwtCheckOptions {
  /** The only `alg` values accepted (HS* for a secret, RS/PS/ES/EdDSA for a JWKS). */
  readonly algorithms: readonly string[];
  readonly getKey: JWTVerifyGetKey;
  /** True for key-resolution errors meaning "cannot check now" (503), not "bad token" (401). */
  readonly isUnavailable?: (err: unknown) => boolean;
  /**
   * Changes whenever the trusted key set changes (JWKS rotation): cached verifications made with
   * the previous keys are dropped. Absent for a fixed key (a secret is fixed per configuration).
   */
  readonly keySetVersion?: () => number;
  /** Bounds of the verified-token cache (token-cache.ts); `false` turns it off. */
  readonly tokenCache?:
    false | { readonly maxEntries?: number; readonly maxBytes?: number; readonly maxTtlMs?: number };
}

// RFC 6750 3: tell the client which scheme is expected, and why the token failed.
const MISSING = gatewayRefusal('GW_AUTH_MISSING', 'no Authorization header', {
  'www-authenticate': 'Bearer realm="portico"',
});
const INVALID_HEADERS = { 'www-authenticate': 'Bearer realm="portico", error="invalid_token"' };

/** RFC 6750 2.1: `Bearer <token>`, scheme case-insensitive. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The token of a `Bearer` Authorization header, or undefined when the header has another shape. */
export function bearerToken(header: string): string | undefined {
  return BEARER.exec(header)?.[1];
}

/** An Authenticator validating `Authorization: Bearer <jwt>` with the given keys and checks. */
export function createJwtAuthenticator(options: JwtAuthenticatorOptions): Authenticator {
  const { now, keySetVersion } = options;
  // One per authenticator, i.e. per configuration: a reload with another secret starts empty.
  const cache =
    options.tokenCache === false
      ? undefined
      : createTokenCache({ ...options.tokenCache, clockToleranceSec: options.clockToleranceSec, now: now ?? Date.now });
  const verifier: Verifier = { options, verifyOptions: verifyOptionsOf(options), cache };
  let cachedVersion = keySetVersion?.();

  return {
    // A token the cache holds is answered synchronously: no promise on the hot path.
    authenticate(req, requestId) {
      const header = req.headers.authorization;
      if (header === undefined || header === '') return MISSING;
      let version: number | undefined;
      if (cache !== undefined) {
        if (keySetVersion !== undefined) {
          version = keySetVersion();
          // Rotation: a verification made with keys no longer published must not be served.
          if (version !== cachedVersion) {
            cache.clear();
            cachedVersion = version;
          }
        }
        // Entries are keyed `Bearer <token>`, the form clients send: such a header is looked up
        // as it is, without parsing it.
        const hit = cache.get(header);
        if (hit !== undefined) return hit;
      }
      const token = bearerToken(header);
      if (token === undefined)
        return gatewayRefusal('GW_AUTH_INVALID', 'Authorization is not "Bearer <token>"', INVALID_HEADERS);
      const key = `Bearer ${token}`;
      if (cache !== undefined && key !== header) {
        const hit = cache.get(key);
        if (hit !== undefined) return hit;
      }
      return verify(verifier, key, token, requestId, version);
    },
  };
}

/** What verifying a token the cache does not hold needs: made once per authenticator. */
interface Verifier {
  readonly options: JwtAuthenticatorOptions;
  readonly verifyOptions: JWTVerifyOptions;
  readonly cache: TokenCache | undefined;
}

/** jose's options for the configured checks. */
function verifyOptionsOf(options: JwtAuthenticatorOptions): JWTVerifyOptions {
  // Built once: the hot path passes the same options object to jose.
  return {
    algorithms: [...options.algorithms],
    clockTolerance: options.clockToleranceSec,
    ...(options.issuer === undefined
      ? {}
      : { issuer: typeof options.issuer === 'string' ? options.issuer : [...options.issuer] }),
    ...(options.audience === undefined
      ? {}
      : { audience: typeof options.audience === 'string' ? options.audience : [...options.audience] }),
  };
}

/** Verifies a token the cache does not hold, and caches the success under `key`. */
async function verify(
  verifier: Verifier,
  key: string,
  token: string,
  requestId: string,
  version: number | undefined,
): Promise<AuthOutcome> {
  const { verifyOptions, cache } = verifier;
  const { getKey, logger, isUnavailable, now, keySetVersion, clockToleranceSec } = verifier.options;
  let payload: Record<string, unknown>;
  try {
    const opts = now === undefined ? verifyOptions : { ...verifyOptions, currentDate: new Date(now()) };
    payload = (await jwtVerify(token, getKey, opts)).payload;
  } catch (err) {
    const detail = describe(err);
    if (isUnavailable?.(err)) return gatewayRefusal('GW_AUTH_UNAVAILABLE', detail);
    return gatewayRefusal('GW_AUTH_INVALID', detail, INVALID_HEADERS);
  }
  // A token is not used before it was issued: `iat` later than now (beyond the clock tolerance,
  // the knob for an issuer's clock running ahead) is refused like an `nbf` in the future.
  if (typeof payload.iat === 'number' && payload.iat > Math.floor((now ?? Date.now)() / 1000) + clockToleranceSec) {
    return gatewayRefusal(
      'GW_AUTH_INVALID',
      '"iat" claim timestamp check failed (issued in the future)',
      INVALID_HEADERS,
    );
  }
  const skipped: SkippedClaim[] = [];
  const headers = claimHeaders(payload, skipped, verifier.options.clientSubjectHeader);
  if (skipped.length > 0) logger.warn({ reqId: requestId, skipped }, 'auth: claims skipped, not valid as headers');
  const outcome: AuthSuccess = { ok: true, claimHeaders: headers, claims: payload };
  // Not cached if the key set changed while this token was verified (which set checked it is unknown).
  if (cache !== undefined && (keySetVersion === undefined || keySetVersion() === version))
    cache.set(key, payload, outcome);
  return outcome;
}

/** jose error code and message, for logs (never sent to the client). */
function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
