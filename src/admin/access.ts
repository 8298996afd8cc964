/**
 * Who may read the admin listener (docs/dashboard.md "The token").
 *
 * Without `config.admin.token`, anyone who reaches the port may; but only under a Host that is
 * an IP address or `localhost`, so that a web page elsewhere cannot read it through a DNS name
 * rebound to 127.0.0.1 (DNS rebinding). With a token, a request needs it as a bearer token
 * (ops/bearer-check.ts, compared in constant time) or the session cookie the login form sets.
 *
 * The cookie holds an expiry and an HMAC of it keyed by the token and a secret made at start: it
 * reveals nothing of the token, cannot be forged, and stops working when the token changes or the
 * process restarts. It is HttpOnly (scripts cannot read it) and SameSite=Strict (other sites
 * cannot send it).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { bearerCheck, secretMatcher } from '../ops/bearer-check.js';

export const SESSION_COOKIE = 'portico_admin';
/** How long a login lasts. */
export const SESSION_SEC = 12 * 3600;

export interface AdminAccess {
  /** True when a token is configured (the page offers the login form and a sign-out button). */
  readonly hasToken: boolean;
  /** Whether the request may read the page and the API. */
  allows(req: IncomingMessage): boolean;
  /** Whether the Host header is one this listener answers (always, with a token). */
  hostAllowed(req: IncomingMessage): boolean;
  /** The Set-Cookie value for a login with `token`, or undefined when the token is wrong. */
  login(token: string): string | undefined;
}

/** `now`: wall-clock milliseconds. */
export function createAdminAccess(token: string | undefined, now: () => number = Date.now): AdminAccess {
  if (token === undefined)
    return {
      hasToken: false,
      allows: () => true,
      hostAllowed: (req) => isLocalHost(req.headers.host),
      login: () => undefined,
    };
  const key = createHmac('sha256', randomBytes(32)).update(token).digest();
  const bearer = bearerCheck(token);
  const matches = secretMatcher(token);
  const sign = (expires: number) => createHmac('sha256', key).update(String(expires)).digest('base64url');
  return {
    hasToken: true,
    allows(req) {
      if (req.headers.authorization !== undefined) return bearer(req) === undefined;
      const session = cookie(req.headers.cookie, SESSION_COOKIE);
      const match = session === undefined ? null : /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(session);
      if (match === null) return false;
      const expires = Number(match[1]);
      if (expires * 1000 <= now()) return false;
      return timingSafeEqual(Buffer.from(match[2]!), Buffer.from(sign(expires)));
    },
    hostAllowed: () => true,
    login(given) {
      if (!matches(given)) return undefined;
      const expires = Math.floor(now() / 1000) + SESSION_SEC;
      return `${SESSION_COOKIE}=${expires}.${sign(expires)}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_SEC}`;
    },
  };
}

/** The Set-Cookie value that signs out. */
export const SIGN_OUT_COOKIE = `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;

/** A Host header naming this machine by address or as localhost (any port). */
export function isLocalHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d*$/, '');
  return isIP(name) !== 0 || /^(.+\.)?localhost\.?$/i.test(name);
}

/** One cookie's value from a Cookie header. */
function cookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
