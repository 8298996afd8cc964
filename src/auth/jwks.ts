/**
 * JWKS mode (`config.auth.jwksUrl`): RS*, PS*, ES* and EdDSA tokens verified with
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
 * A key source is made once per process per URL (jwks-registry.ts), so its keys, backoff and
 * stale keys survive configuration reloads; it counts key set changes (`version`) so the
 * authenticator's verified-token cache is dropped on rotation.
 */
import { redactUrl } from '../config/syntax/redact-url.js';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  jwksCache,
  type FetchImplementation,
  type JSONWebKeySet,
  type JWKSCacheInput,
  type JWTVerifyGetKey,
} from 'jose';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import type { Logger } from '../observability/logger.js';
import type { Authenticator } from './types.js';
import { createJwtAuthenticator, type JwtCheckOptions } from './jwt-authenticator.js';

/** Asymmetric algorithms only: an HS256 token "signed" with a public key is refused (algorithm confusion). */
export const JWKS_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

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
  /**
   * The key set as last loaded, not copied: a new object after each applied fetch. jose's `jwks()`
   * copies on every call, so the real set provides this (from jose's `jwksCache` hook) and change
   * detection costs one comparison; without it `jwks()` is compared by content.
   */
  loadedKeys?(): JSONWebKeySet | undefined;
}

export interface JwksKeySourceOptions {
  readonly remote: RemoteKeySet;
  readonly logger: Logger;
  /** The endpoint as logs and messages show it (config/syntax/redact-url.ts). */
  readonly url: string;
  /** No new fetch for this long after a failed one. */
  readonly retryAfterFailureMs: number;
  readonly now: () => number;
}

export interface JwksKeySource {
  readonly getKey: JWTVerifyGetKey;
  /** Fetches now (at config load), so the first request does not wait; never throws. */
  prefetch(): Promise<void>;
  /** Increases each time the loaded key set changes content (a rotation); stays put on refetches of the same keys. */
  version(): number;
}

/** Key resolution with failure backoff and stale-if-error around a remote key set. */
export function createJwksKeySource(options: JwksKeySourceOptions): JwksKeySource {
  const { remote, logger, url } = options;
  const failures = new FetchFailures(options);
  const keySet = new KeySetVersion(remote.loadedKeys ?? remote.jwks);

  const getKey: JWTVerifyGetKey = async (...args) => {
    if (failures.backingOff()) return failures.fromStale(...args);
    try {
      const key = await remote(...args);
      keySet.note();
      if (failures.failing) failures.markSuccess();
      return key;
    } catch (err) {
      if (err instanceof errors.JOSEError && TOKEN_ERRORS.has(err.code)) {
        // An unknown kid may have made jose refetch: the set can have changed even though this token failed.
        keySet.note();
        throw err;
      }
      failures.markFailure(err);
      return failures.fromStale(...args);
    }
  };

  return {
    getKey,
    version: () => keySet.version,
    async prefetch() {
      try {
        await remote.reload();
        keySet.note();
        failures.failing = false;
        logger.info({ url, keys: remote.jwks()?.keys.length ?? 0 }, 'auth: JWKS keys loaded');
      } catch (err) {
        failures.markFailure(err);
      }
    },
  };
}

/** Counts the changes of the loaded key set's content: a rotation, not a refetch of the same keys. */
class KeySetVersion {
  version = 0;
  private lastSet: JSONWebKeySet | undefined;
  private lastContent: string | undefined;

  constructor(private readonly loadedKeys: () => JSONWebKeySet | undefined) {}

  /** Called after every successful key lookup or load: a new set object may carry other keys. */
  note(): void {
    const set = this.loadedKeys();
    if (set === this.lastSet) return;
    this.lastSet = set;
    const content = JSON.stringify(set?.keys ?? []);
    if (content === this.lastContent) return;
    this.lastContent = content;
    this.version++;
  }
}

/** The failure backoff and stale-if-error of one key source (the design note above). */
class FetchFailures {
  failing = false;
  private retryAt = 0;
  /** The last keys that loaded, used while the endpoint fails. */
  private stale: JWTVerifyGetKey | undefined;

  constructor(private readonly options: JwksKeySourceOptions) {}

  /** True while the last fetch failed and the next one must wait for the backoff. */
  backingOff(): boolean {
    return this.failing && this.options.now() < this.retryAt;
  }

  markFailure(err: unknown): void {
    const { remote, logger, url, retryAfterFailureMs, now } = this.options;
    this.retryAt = now() + retryAfterFailureMs;
    const cached = remote.jwks();
    this.stale = cached === undefined ? undefined : createLocalJWKSet(cached);
    if (!this.failing) {
      logger.warn(
        { url, err, hasKeys: this.stale !== undefined },
        this.stale
          ? 'auth: JWKS endpoint failing; verifying with the keys loaded before'
          : 'auth: JWKS endpoint unavailable; protected routes answer 503 until keys load',
      );
    }
    this.failing = true;
  }

  markSuccess(): void {
    if (this.failing) this.options.logger.info({ url: this.options.url }, 'auth: JWKS keys loaded');
    this.failing = false;
    this.stale = undefined;
  }

  async fromStale(...args: Parameters<JWTVerifyGetKey>): Promise<Awaited<ReturnType<JWTVerifyGetKey>>> {
    const { url } = this.options;
    const stale = this.stale;
    if (stale === undefined) throw new JwksUnavailableError(`JWKS endpoint ${url} unavailable; no keys loaded`);
    try {
      return await stale(...args);
    } catch (err) {
      // An unknown kid may be a rotated key we cannot fetch now: "cannot tell" is a 503, not a 401.
      if (err instanceof errors.JWKSNoMatchingKey)
        throw new JwksUnavailableError(`JWKS endpoint ${url} unavailable; kid not among the keys loaded before`, {
          cause: err,
        });
      throw err;
    }
  }
}

export interface RemoteKeySourceOptions {
  readonly url: string;
  /** Minimum time between two refetches caused by an unknown `kid` (jose's cooldownDuration). */
  readonly cooldownSec: number;
  readonly logger: Logger;
  /** Default 1 s. */
  readonly retryAfterFailureMs?: number;
  /** Milliseconds clock for the retry backoff; default `Date.now`. */
  readonly now?: () => number;
  /**
   * The upstream pool of the JWKS origin: keep-alive, and the `upstreamTls` settings (a private CA)
   * apply to the key fetch as to any backend. Without it, the global fetch is used.
   */
  readonly pool?: Dispatcher | undefined;
}

/** The key source of a JWKS URL; starts fetching the keys at once (in the background). */
export function createRemoteKeySource(options: RemoteKeySourceOptions): JwksKeySource {
  // jose writes each applied key set here (`jwks`, a new object per fetch): cheap change detection.
  const applied: JWKSCacheInput = {};
  const jose = createRemoteJWKSet(new URL(options.url), {
    // The same bound as the delegated auth service call (5 s).
    timeoutDuration: 5_000,
    cooldownDuration: options.cooldownSec * 1000,
    [jwksCache]: applied,
    ...(options.pool === undefined ? {} : { [customFetch]: fetchThrough(options.pool) }),
  });
  const remote: RemoteKeySet = Object.assign(jose, { loadedKeys: () => (applied as { jwks?: JSONWebKeySet }).jwks });
  const source = createJwksKeySource({
    remote,
    logger: options.logger,
    // Its query may hold a key, and the value may have come from the environment.
    url: redactUrl(options.url),
    retryAfterFailureMs: options.retryAfterFailureMs ?? 1_000,
    now: options.now ?? Date.now,
  });
  void source.prefetch();
  return source;
}

export interface JwksOptions extends JwtCheckOptions {
  /** The process-wide key source of the JWKS URL (jwks-registry.ts). */
  readonly keys: JwksKeySource;
}

/** An Authenticator for tokens signed with the keys of a JWKS endpoint. */
export function createJwksAuthenticator(options: JwksOptions): Authenticator {
  return createJwtAuthenticator({
    algorithms: JWKS_ALGORITHMS,
    getKey: options.keys.getKey,
    // Rotation drops the verified-token cache.
    keySetVersion: options.keys.version,
    issuer: options.issuer,
    audience: options.audience,
    clockToleranceSec: options.clockToleranceSec,
    logger: options.logger,
    isUnavailable: (err) => err instanceof JwksUnavailableError,
    ...(options.now === undefined ? {} : { now: options.now }),
  });
}

/** jose's fetch hook, sending the key fetch through an undici dispatcher. */
function fetchThrough(dispatcher: Dispatcher): FetchImplementation {
  // undici's Response is the one Node's global fetch returns; only the type packages differ.
  return (url, init) =>
    undiciFetch(url, {
      method: init.method,
      headers: Object.fromEntries(init.headers),
      redirect: init.redirect,
      signal: init.signal,
      dispatcher,
    }) as unknown as Promise<Response>;
}
