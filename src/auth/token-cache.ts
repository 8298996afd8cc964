/**
 * Verified-token cache for local (secret) and JWKS modes (a jose verification through
 * WebCrypto costs more than the rest of the proxy path, and clients resend the same token; see
 * docs/performance.md), and for introspection answers (./introspection.ts, which keys it by a hash
 * of the token instead).
 *
 * Design note. Keyed by `Bearer <token>` with the exact token string; a value is the success
 * outcome (claim headers) plus `exp`/`nbf`. Only successes are stored, so a flood of bad tokens
 * neither fills the cache nor skips a check. An entry lives at most `maxTtlMs` (default 300 s)
 * and never past the token's `exp` (+ clock tolerance), and on every hit `exp`/`nbf` are checked
 * again against the clock with jose's exact rule (whole seconds, `clockToleranceSec`), so a cached
 * token stops being accepted at the same instant an uncached one would. Bounded by entries and by bytes (LRU eviction). The
 * cache belongs to one authenticator, i.e. one configuration: a reload that changes the secret,
 * issuer or audience starts empty; the JWKS authenticator clears it when the key set changes.
 */
import { LRUCache } from 'lru-cache';
import type { AuthOutcome } from './types.js';

export type AuthSuccess = Extract<AuthOutcome, { ok: true }>;

/** Default bounds: 10,000 tokens, 16 MiB of tokens and claims, 300 s per entry. */
export const TOKEN_CACHE_MAX_ENTRIES = 10_000;
export const TOKEN_CACHE_MAX_BYTES = 16 * 1024 * 1024;
export const TOKEN_CACHE_MAX_TTL_MS = 300_000;

interface Entry {
  readonly outcome: AuthSuccess;
  readonly exp: number | undefined;
  readonly nbf: number | undefined;
}

export interface TokenCacheOptions {
  readonly clockToleranceSec: number;
  /** Milliseconds since the epoch; the same clock the verification uses. */
  readonly now: () => number;
  readonly maxEntries?: number;
  readonly maxBytes?: number;
  readonly maxTtlMs?: number;
}

export interface TokenCache {
  /** The cached success for this token, if it is still within its exp/nbf window. */
  get(token: string): AuthSuccess | undefined;
  /**
   * Stores a verified token's outcome; `payload` is its verified claims set. `claimsBytes`: the
   * size of the claims' text when it is not bounded by a header's (an introspection answer), so
   * the byte bound counts them too.
   */
  set(token: string, payload: Readonly<Record<string, unknown>>, outcome: AuthSuccess, claimsBytes?: number): void;
  clear(): void;
  readonly size: number;
}

/** A bounded LRU of verified tokens; see the design note above. */
export function createTokenCache(options: TokenCacheOptions): TokenCache {
  const { now, clockToleranceSec: tolerance } = options;
  const maxTtlMs = options.maxTtlMs ?? TOKEN_CACHE_MAX_TTL_MS;
  const lru = new LRUCache<string, Entry>({
    max: options.maxEntries ?? TOKEN_CACHE_MAX_ENTRIES,
    maxSize: options.maxBytes ?? TOKEN_CACHE_MAX_BYTES,
    sizeCalculation: sizeOf,
    ttl: maxTtlMs,
    // Read the injected clock on every check (no 1 ms reading cache and its timer), so tests
    // advance time by hand and TTLs follow the same clock as exp/nbf.
    ttlResolution: 0,
    perf: { now },
  });

  return {
    get(token) {
      const entry = lru.get(token);
      if (entry === undefined) return undefined;
      // jose's rule (jwt_claims_set.js): now in whole seconds; nbf > now + tol or exp <= now - tol fails.
      const nowSec = Math.floor(now() / 1000);
      if (
        (entry.exp !== undefined && entry.exp <= nowSec - tolerance) ||
        (entry.nbf !== undefined && entry.nbf > nowSec + tolerance)
      ) {
        lru.delete(token);
        return undefined;
      }
      return entry.outcome;
    },
    set(token, payload, outcome, claimsBytes) {
      const exp = numericDate(payload.exp);
      // `iat` counts as a not-before (a token issued in the future is refused, like an early nbf).
      const nbf = latest(numericDate(payload.nbf), numericDate(payload.iat));
      // Valid until (exp + tolerance) s, the first instant jose refuses it; never longer than maxTtlMs.
      const ttl = exp === undefined ? maxTtlMs : Math.min(maxTtlMs, (exp + tolerance) * 1000 - now());
      // A ttl of 0 means "no expiry" to lru-cache; a token about to expire is simply not cached.
      if (!(ttl >= 1)) return;
      const entry = { outcome, exp, nbf };
      lru.set(
        token,
        entry,
        // Parsed JSON takes about twice its text in V8, like the strings above.
        claimsBytes === undefined
          ? { ttl: Math.floor(ttl) }
          : { ttl: Math.floor(ttl), size: sizeOf(entry, token) + 2 * claimsBytes },
      );
    },
    clear: () => lru.clear(),
    get size() {
      return lru.size;
    },
  };
}

/** UTF-16 code units x 2, roughly what V8 holds; claim headers are at most a few per token. */
function sizeOf(entry: Entry, token: string): number {
  return 2 * token.length + entry.outcome.claimHeaders.reduce((n, [k, v]) => n + 2 * (k.length + v.length) + 32, 64);
}

/** jose has validated these as finite numbers when present. */
function numericDate(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

function latest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}
