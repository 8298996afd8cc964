/**
 * The demo's auth service (port 9105), the operator-side half of spec 4.2:
 *   POST /auth/login    {"username","password"} -> 200 {"token", "tokenType", "expiresIn"} (HS256, 1 h)
 *   GET  /auth/validate Authorization: Bearer <token> -> 200 claims {userId, username, role, email},
 *                       else 401 {"error", "success": false}; the gateway relays that 401 as it is
 *   GET  /me            a tiny backend behind a protected route: echoes the identity headers the
 *                       gateway added from the claims (X-userId, X-username, X-role, X-email)
 * Demo only: fixed users and passwords, a secret from DEMO_JWT_SECRET or a built-in default.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { jwtVerify, SignJWT } from 'jose';
import { users } from './data.js';

/** The demo's accounts: usernames and passwords for the users of data.ts. */
export const DEMO_ACCOUNTS = [
  { username: 'ada', password: 'lovelace', userId: 1 },
  { username: 'alan', password: 'turing', userId: 2 },
  { username: 'grace', password: 'hopper', userId: 3 },
] as const;

/** HS256 secret shared with a gateway in local mode (`config.auth.secret`), if you switch to it. */
export const DEMO_JWT_SECRET = process.env.DEMO_JWT_SECRET ?? 'portico-demo-secret-change-me-0123456789';
const key = new TextEncoder().encode(DEMO_JWT_SECRET);
const ISSUER = 'portico-demo';
const TOKEN_TTL_SEC = 3600;
const MAX_LOGIN_BODY = 16 * 1024;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** The claims of a demo account: all strings, so each becomes an `X-<claim>` header. */
function claimsOf(userId: number): Record<string, string> | undefined {
  const account = DEMO_ACCOUNTS.find((a) => a.userId === userId);
  const user = users.find((u) => u.id === userId);
  if (!account || !user) return undefined;
  return { userId: String(user.id), username: account.username, role: user.role, email: user.email };
}

async function login(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_LOGIN_BODY) return send(res, 413, { error: 'Body too large', success: false });
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return send(res, 400, { error: 'Body must be JSON: {"username": "...", "password": "..."}', success: false });
  }
  const { username, password } = (body ?? {}) as { username?: unknown; password?: unknown };
  const account = DEMO_ACCOUNTS.find(
    (a) =>
      typeof username === 'string' &&
      typeof password === 'string' &&
      a.username === username &&
      sameText(a.password, password),
  );
  if (!account) return send(res, 401, { error: 'Invalid username or password', success: false });
  const token = await new SignJWT({ ...claimsOf(account.userId) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(String(account.userId))
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime(`${TOKEN_TTL_SEC}s`)
    .sign(key);
  send(res, 200, { token, tokenType: 'Bearer', expiresIn: TOKEN_TTL_SEC });
}

async function validate(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const header = req.headers.authorization;
  const token = header === undefined ? undefined : /^Bearer +(\S+)$/i.exec(header)?.[1];
  if (token === undefined)
    return send(res, 401, { error: 'Missing bearer token: POST /api/auth/login first', success: false });
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: ISSUER });
    const claims = claimsOf(Number(payload.sub));
    if (!claims) return send(res, 401, { error: 'Unknown user', success: false });
    send(res, 200, claims);
  } catch {
    send(res, 401, { error: 'Invalid or expired token', success: false });
  }
}

/** GET /me: what a backend behind the gateway learns about the caller, from the claim headers only. */
function me(req: IncomingMessage, res: ServerResponse): void {
  const h = req.headers;
  send(res, 200, { userId: h['x-userid'], username: h['x-username'], role: h['x-role'], email: h['x-email'] });
}

/** The demo auth service's request handler (same shape as the other demo services). */
export const authService = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
  const route = `${req.method} ${url.pathname}`;
  const done = (p: Promise<void>) => p.catch(() => send(res, 500, { error: 'Internal error', success: false }));
  if (route === 'POST /auth/login') return void done(login(req, res));
  if (route === 'GET /auth/validate') return void done(validate(req, res));
  if (route === 'GET /me') return me(req, res);
  send(res, 404, { error: 'not found', success: false });
};
