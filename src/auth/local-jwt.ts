/**
 * Local mode (`config.auth.secret`): HS256, HS384 and HS512 tokens verified
 * with the configured secret. One HMAC key per algorithm is imported at config load, so the hot
 * path never re-imports the secret (jose would for a raw Uint8Array on every call).
 */
import { webcrypto } from 'node:crypto';
import type { JWTVerifyGetKey } from 'jose';
import type { Authenticator } from './types.js';
import { MIN_SECRET_BYTES } from '../config/notices.js';
import { createJwtAuthenticator, type JwtCheckOptions } from './jwt-authenticator.js';

export const HMAC_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
const HASH: Record<(typeof HMAC_ALGORITHMS)[number], string> = { HS256: 'SHA-256', HS384: 'SHA-384', HS512: 'SHA-512' };

export interface LocalJwtOptions extends JwtCheckOptions {
  readonly secret: string;
}

/** An Authenticator for HMAC-signed JWTs. */
export function createLocalJwtAuthenticator(options: LocalJwtOptions): Authenticator {
  const bytes = new TextEncoder().encode(options.secret);
  if (bytes.length < MIN_SECRET_BYTES) {
    options.logger.warn(
      { bytes: bytes.length },
      `auth: config.auth.secret is shorter than ${MIN_SECRET_BYTES} bytes; tokens signed with it are easier to forge`,
    );
  }
  const keys = new Map(
    HMAC_ALGORITHMS.map((alg) => [
      alg as string,
      webcrypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: HASH[alg] }, false, ['verify']),
    ]),
  );
  // jose checks `alg` against the pinned list before asking for a key, so `alg` is one of HMAC_ALGORITHMS here.
  const getKey: JWTVerifyGetKey = (header) => keys.get(header.alg ?? '')!;
  return createJwtAuthenticator({
    algorithms: HMAC_ALGORITHMS,
    getKey,
    issuer: options.issuer,
    audience: options.audience,
    clockToleranceSec: options.clockToleranceSec,
    logger: options.logger,
    ...(options.now === undefined ? {} : { now: options.now }),
  });
}
