/**
 * One credential per request. Node keeps only the first `Authorization` header in `req.headers`
 * (that is the one the gateway validates), but the backend receives every raw header, and many
 * frameworks read the last value. A request with two would reach the backend with a credential
 * the gateway never checked. So on protected routes, in every mode, such a request is refused
 * (400 GW_AUTH_AMBIGUOUS) before any validation or auth service call, and never forwarded.
 */
import type { Authenticator } from './types.js';
import { gatewayRefusal } from './refusal.js';

const AMBIGUOUS = gatewayRefusal('GW_AUTH_AMBIGUOUS', 'several Authorization headers');

/** True when the raw header list (`req.rawHeaders`) holds more than one Authorization header, any case. */
export function hasSeveralAuthorization(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    // Length first: almost every header is ruled out without building a lower-case copy.
    if (name.length !== 13 || name.toLowerCase() !== 'authorization') continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}

/** Wraps an Authenticator so that a request with several Authorization headers is refused before it runs. */
export function refuseSeveralAuthorization(inner: Authenticator): Authenticator {
  return {
    authenticate: (req, requestId, routeId) =>
      hasSeveralAuthorization(req.rawHeaders) ? AMBIGUOUS : inner.authenticate(req, requestId, routeId),
    ...(inner.close === undefined ? {} : { close: () => inner.close!() }),
  };
}
