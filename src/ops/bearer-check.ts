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
  // Compared as digests: equal lengths for timingSafeEqual, and no early exit on the first
  // differing byte that would tell an attacker how much of a guess was right.
  const expected = digest(token);
  return (req) => {
    const header = req.headers.authorization;
    if (header === undefined) return 'GW_AUTH_MISSING';
    const match = /^Bearer +(\S+) *$/i.exec(header);
    if (match === null || !timingSafeEqual(digest(match[1]!), expected)) return 'GW_AUTH_INVALID';
    return undefined;
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
