/**
 * `portico token`: a signed HS256/384/512 JWT for trying a protected route by hand. The secret is
 * `--secret`, else `$JWT_SECRET`, else the configuration's `auth.secret`; a configuration that
 * trusts an identity provider (jwksUrl, authService, introspection) gets no token from here, since the gateway
 * would refuse one signed with a secret.
 */
import { SignJWT } from 'jose';
import type { CliArgs } from './args.js';
import { loadConfig } from '../config/load.js';
import { formatProblem } from '../config/problems.js';
import { HMAC_ALGORITHMS } from '../auth/local-jwt.js';
import { MIN_SECRET_BYTES } from '../config/notices.js';
import { redactUrl } from '../config/syntax/redact-url.js';

/** `30s`, `15m`, `1h`, `7d`: what `--exp` accepts. */
const DURATION = /^(\d+)(s|m|h|d)$/;
const UNIT_SEC = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
/** Claims the signer sets itself from other options. */
const TIME_CLAIMS = new Set(['exp', 'iat', 'nbf']);

export type TokenResult = { ok: true; token: string; warning?: string } | { ok: false; code: 1 | 2; message: string };

/** Signs the token `args` describe; never throws for a user mistake. */
export async function runToken(
  args: CliArgs,
  env: NodeJS.ProcessEnv,
  nowMs: number = Date.now(),
): Promise<TokenResult> {
  const alg = args.token.alg ?? 'HS256';
  if (!(HMAC_ALGORITHMS as readonly string[]).includes(alg))
    return usage(
      `--alg ${alg}: portico token signs HS256, HS384 or HS512 only (RS*/ES* tokens come from your identity provider)`,
    );
  const exp = DURATION.exec(args.token.exp ?? '1h');
  if (exp === null) return usage(`--exp "${args.token.exp}": expected a number and a unit, e.g. 30s, 15m, 1h, 7d`);
  const claims: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const text of args.token.claims) {
    const eq = text.indexOf('=');
    if (eq <= 0) return usage(`--claim "${text}": expected NAME=VALUE, e.g. --claim sub=1`);
    const name = text.slice(0, eq);
    if (TIME_CLAIMS.has(name)) return usage(`--claim ${name}: set by portico token (use --exp for the lifetime)`);
    claims[name] = text.slice(eq + 1);
  }

  let secret = args.token.secret ?? (env.JWT_SECRET || undefined);
  let issuer: string | undefined;
  let audience: string | undefined;
  // An explicit configuration is always read: it may trust an identity provider instead of a secret.
  if (secret === undefined || args.configGiven) {
    const loaded = loadConfig(args.config, env);
    if (!loaded.ok) {
      if (secret !== undefined || args.configGiven)
        return { ok: false, code: 1, message: loaded.problems.map(formatProblem).join('\n') };
      return usage(
        `no secret: give --secret S, set $JWT_SECRET, or --config FILE with auth.secret (${args.config} was not usable)`,
      );
    }
    const auth = loaded.config.settings.auth;
    if (auth.authService !== undefined || auth.jwksUrl !== undefined || auth.introspection !== undefined) {
      const provider =
        auth.introspection !== undefined
          ? `the authorization server's introspection endpoint ${redactUrl(auth.introspection.url)}`
          : auth.authService !== undefined
            ? `the auth service ${auth.authService}`
            : `the identity provider whose keys are at ${auth.jwksUrl}`;
      return usage(
        `${args.config} validates tokens with ${provider}: get a token from it; portico token only signs for auth.secret`,
      );
    }
    secret ??= auth.secret;
    if (secret === undefined) return usage(`${args.config} has no auth.secret: give --secret S or set $JWT_SECRET`);
    issuer = first(auth.issuer);
    audience = first(auth.audience);
  }

  const nowSec = Math.floor(nowMs / 1000);
  const jwt = new SignJWT({ ...claims })
    .setProtectedHeader({ alg, typ: 'JWT' })
    .setIssuedAt(nowSec)
    .setExpirationTime(nowSec + Number(exp[1]) * UNIT_SEC[exp[2] as keyof typeof UNIT_SEC]);
  // The gateway checks iss and aud when its configuration sets them; a claim given by hand wins.
  if (issuer !== undefined && claims.iss === undefined) jwt.setIssuer(issuer);
  if (audience !== undefined && claims.aud === undefined) jwt.setAudience(audience);
  const key = new TextEncoder().encode(secret);
  const token = await jwt.sign(key);
  // The same warning `portico check` gives for such an auth.secret: the token works, and is weak.
  if (key.length >= MIN_SECRET_BYTES) return { ok: true, token };
  return {
    ok: true,
    token,
    warning: `warning: the secret is shorter than ${MIN_SECRET_BYTES} bytes (${key.length}); tokens signed with it are easier to forge (use 32 random bytes or more, e.g. openssl rand -base64 32)`,
  };
}

function usage(message: string): TokenResult {
  return { ok: false, code: 2, message };
}

function first(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}
