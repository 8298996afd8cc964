/**
 * HS256 tokens for the integration tests: `hs256Signer(secret)` signs claims with the secret a
 * test's gateway is configured with (`config.auth.secret`), so each test file keeps its own secret
 * and shares the signing code.
 */
import { SignJWT, type JWTPayload } from 'jose';

export interface SignOptions {
  /** jose's expiration (e.g. '5m'); none when absent. */
  readonly expiresIn?: string;
}

/**
 * A function signing claims with `secret` (HS256).
 * @example const sign = hs256Signer(SECRET); const token = await sign({ sub: 'alice' });
 */
export function hs256Signer(secret: string, options: SignOptions = {}): (claims: JWTPayload) => Promise<string> {
  const key = new TextEncoder().encode(secret);
  return (claims) => {
    const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' });
    if (options.expiresIn !== undefined) jwt.setExpirationTime(options.expiresIn);
    return jwt.sign(key);
  };
}
