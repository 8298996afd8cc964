/**
 * `portico key`: a new API key and the hash a consumer lists (docs/consumers.md "API keys"). The
 * key is 32 random bytes (256 bits, beyond any guessing) in base64url, with a `pk_` prefix so a
 * key is recognisable in a leaked file or a secret scanner; only the hash goes into the
 * configuration.
 */
import { createHash, randomBytes } from 'node:crypto';

/** The hash a consumer lists for `key`: `sha256:` and the hex SHA-256 of its UTF-8 bytes. */
export function keyHash(key: string): string {
  return `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/** A new random key and its hash. */
export function newApiKey(): { key: string; hash: string } {
  const key = `pk_${randomBytes(32).toString('base64url')}`;
  return { key, hash: keyHash(key) };
}
