/**
 * A shared-secret check for the gateway's own endpoints (`telemetry.metricsToken`): Prometheus
 * sends it as `Authorization: Bearer <token>` (its `authorization.credentials` setting).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ErrorCode } from '../response/errors.js';

/** Returns the refusal for a request, or undefined when it may pass (always, without a token). */
export function bearerCheck(token: string | undefined): (req: IncomingMessage) => ErrorCode | undefined {
  if (token === undefined) return () => undefined;
  const matches = secretMatcher(token);
  return (req) => {
    const header = req.headers.authorization;
    if (header === undefined) return 'GW_AUTH_MISSING';
    const match = /^Bearer +(\S+) *$/i.exec(header);
    if (match === null || !matches(match[1]!)) return 'GW_AUTH_INVALID';
    return undefined;
  };
}

/** Whether a given text is `secret`, compared in constant time (a login form's token field). */
export function secretMatcher(secret: string): (given: string) => boolean {
  // Compared as digests: equal lengths for timingSafeEqual, and no early exit on the first
  // differing byte that would tell an attacker how much of a guess was right.
  const expected = digest(secret);
  return (given) => timingSafeEqual(digest(given), expected);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
