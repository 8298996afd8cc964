/**
 * JWKS mode (DECISIONS.md `config.auth.jwksUrl`): RS*, PS*, ES* and EdDSA tokens verified with
 * keys fetched from the JWKS endpoint.
 *
 * Design note. jose's createRemoteJWKSet caches the key set (10 min), refetches when a token names
 * an unknown `kid` (at most once per `cooldownDuration` after a successful fetch: key rotation
 * needs no restart, random kids cannot hammer the endpoint) and shares one in-flight fetch between
 * callers. But it does not limit retries after a *failed* fetch, and while the endpoint is down
 * every lookup that needs a fetch fails, even for keys it loaded before. So this module adds:
 *   - a failure backoff: after a failed fetch, no new fetch for `retryAfterFailureMs`;
 *   - stale-if-error: while the endpoint fails, the last keys that loaded keep verifying;
 *   - a clear split of errors: "endpoint unavailable" (503 GW_AUTH_UNAVAILABLE) versus "this token
 *     does not match any key" (401 GW_AUTH_INVALID).
 * The gateway never waits for the endpoint to start: keys are prefetched in the background, and
 * until they load protected requests get 503 (a fetch is retried by requests after the backoff).
 */
import { createLocalJWKSet, createRemoteJWKSet, customFetch, errors, type FetchImplementation, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import type { Logger } from '../observability/logger.js';
import type { Authenticator } from './authenticator.js';
import { createJwtAuthenticator } from './jwt-authenticator.js';

/** Asymmetric algorithms only: an HS256 token "signed" with a public key is refused (algorithm confusion). */
export const JWKS_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;

/** Errors of key selection that are the token's fault, not the endpoint's. */
const TOKEN_ERRORS = new Set([
  errors.JWKSNoMatchingKey.code,
  errors.JWKSMultipleMatchingKeys.code,
  errors.JOSEAlgNotAllowed.code,
  errors.JOSENotSupported.code,
  errors.JWSInvalid.code,
]);

/** Thrown by the key source when keys cannot be had now; answered 503. */
export class JwksUnavailableError extends Error {
  override readonly name = 'JwksUnavailableError';
}

/** The part of jose's RemoteJWKSet this module uses (a fake stands in for it in unit tests). */
export interface RemoteKeySet {
  (...args: Parameters<JWTVerifyGetKey>): ReturnType<JWTVerifyGetKey>;
  reload(): Promise<void>;
  jwks(): JSONWebKeySet | undefined;
}

export interface JwksKeySourceOptions {
  readonly remote: RemoteKeySet;
  readonly logger: Logger;
  readonly url: string;
  /** No new fetch for this long after a failed one. */
  readonly retryAfterFailureMs: number;
  readonly now: () => number;
}

export interface JwksKeySource {
  readonly getKey: JWTVerifyGetKey;
  /** Fetches now (at config load), so the first request does not wait; never throws. */
  prefetch(): Promise<void>;
}

/** Key resolution with failure backoff and stale-if-error around a remote key set. */
export function createJwksKeySource(options: JwksKeySourceOptions): JwksKeySource {
  const { remote, logger, url, retryAfterFailureMs, now } = options;
  let retryAt = 0;
  /** The last keys that loaded, used while the endpoint fails. */
  let stale: JWTVerifyGetKey | undefined;
  let failing = false;

  function markFailure(err: unknown): void {
    retryAt = now() + retryAfterFailureMs;
    const cached = remote.jwks();
    stale = cached === undefined ? undefined : createLocalJWKSet(cached);
    if (!failing) {
      logger.warn({ url, err, hasKeys: stale !== undefined }, stale ? 'auth: JWKS endpoint failing; verifying with the keys loaded before' : 'auth: JWKS endpoint unavailable; protected routes answer 503 until keys load');
    }
    failing = true;
  }

  function markSuccess(): void {
    if (failing) logger.info({ url }, 'auth: JWKS keys loaded');
    failing = false;
    stale = undefined;
  }

  async function fromStale(...args: Parameters<JWTVerifyGetKey>): Promise<Awaited<ReturnType<JWTVerifyGetKey>>> {
    if (stale === undefined) throw new JwksUnavailableError(`JWKS endpoint ${url} unavailable; no keys loaded`);
    try {
      return await stale(...args);
    } catch (err) {
      // An unknown kid may be a rotated key we cannot fetch now: "cannot tell" is a 503, not a 401.
      if (err instanceof errors.JWKSNoMatchingKey) throw new JwksUnavailableError(`JWKS endpoint ${url} unavailable; kid not among the keys loaded before`, { cause: err });
      throw err;
    }
  }

  const getKey: JWTVerifyGetKey = async (...args) => {
    if (failing && now() < retryAt) return fromStale(...args);
    try {
      const key = await remote(...args);
      if (failing) markSuccess();
      return key;
    } catch (err) {
      if (err instanceof errors.JOSEError && TOKEN_ERRORS.has(err.code)) throw err;
      markFailure(err);
      return fromStale(...args);
    }
  };

  return {
    getKey,
    async prefetch() {
      try {
        await remote.reload();
        failing = false;
        logger.info({ url, keys: remote.jwks()?.keys.length ?? 0 }, 'auth: JWKS keys loaded');
      } catch (err) {
        markFailure(err);
      }
    },
  };
}

export interface JwksOptions {
  readonly jwksUrl: string;
  readonly issuer: string | readonly string[] | undefined;
  readonly audience: string | readonly string[] | undefined;
  readonly clockToleranceSec: number;
  /** Minimum time between two refetches caused by an unknown `kid` (jose's cooldownDuration). */
  readonly cooldownSec: number;
  readonly logger: Logger;
  /** Default 1 s. */
  readonly retryAfterFailureMs?: number;
  /**
   * The upstream pool of the JWKS origin: keep-alive, and the `upstreamTls` settings (a private CA)
   * apply to the key fetch as to any backend. Without it, the global fetch is used.
   */
  readonly pool?: Dispatcher | undefined;
}

/** An Authenticator for tokens signed with the keys of a JWKS endpoint; starts fetching the keys at once. */
export function createJwksAuthenticator(options: JwksOptions): Authenticator {
  const remote = createRemoteJWKSet(new URL(options.jwksUrl), {
    // The same bound as the delegated auth service call (spec 8: 5 s).
    timeoutDuration: 5_000,
    cooldownDuration: options.cooldownSec * 1000,
    ...(options.pool === undefined ? {} : { [customFetch]: fetchThrough(options.pool) }),
  });
  const source = createJwksKeySource({ remote, logger: options.logger, url: options.jwksUrl, retryAfterFailureMs: options.retryAfterFailureMs ?? 1_000, now: Date.now });
  void source.prefetch();
  return createJwtAuthenticator({
    algorithms: JWKS_ALGORITHMS,
    getKey: source.getKey,
    issuer: options.issuer,
    audience: options.audience,
    clockToleranceSec: options.clockToleranceSec,
    logger: options.logger,
    isUnavailable: (err) => err instanceof JwksUnavailableError,
  });
}

/** jose's fetch hook, sending the key fetch through an undici dispatcher. */
function fetchThrough(dispatcher: Dispatcher): FetchImplementation {
  // undici's Response is the one Node's global fetch returns; only the type packages differ.
  return (url, init) => undiciFetch(url, { method: init.method, headers: Object.fromEntries(init.headers), redirect: init.redirect, signal: init.signal, dispatcher }) as unknown as Promise<Response>;
}
