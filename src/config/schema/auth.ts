/** The `config.auth` section: how protected routes find and validate a token. */
import { z } from 'zod';

/** Identity headers removed from every client request before auth runs. */
export const DEFAULT_STRIP_HEADERS = ['X-userId', 'X-username', 'X-role', 'X-sub', 'X-email'];

const stringOrList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

/** `config.auth.introspection`: OAuth2 token introspection (RFC 7662), the third way to check a token. */
export const IntrospectionSchema = z.strictObject({
  url: z.string().min(1).describe('The introspection endpoint (http:// or https://), asked with POST token=...'),
  clientId: z.string().min(1).describe('Client id the gateway authenticates with (HTTP Basic, RFC 6749 2.3.1)'),
  clientSecret: z
    .string()
    .min(1)
    .describe('Client secret the gateway authenticates with; write it as ${ENV_NAME}, it is never logged'),
  cacheMaxSec: z
    .number()
    .min(0)
    .default(60)
    .describe(
      'Longest time an active answer is reused without asking again (never past the token exp); 0: ask for every request. Inactive answers are never cached',
    ),
  timeoutSec: z
    .number()
    .gt(0)
    .max(60)
    .default(5)
    .describe('No complete answer from the introspection endpoint within this time: 503 GW_AUTH_UNAVAILABLE'),
});

export const AuthSchema = z.strictObject({
  authService: z
    .string()
    .min(1)
    .optional()
    .describe('Delegated auth service (host:port); takes priority over jwksUrl, then secret, which are then ignored'),
  authPath: z.string().min(1).default('/auth/validate').describe('Validation endpoint on the auth service'),
  defaultProtected: z.boolean().default(false).describe('Every route requires a valid token unless it is public'),
  tokenFrom: z
    .array(
      z.union([
        z.literal('header'),
        z.strictObject({ cookie: z.string().min(1).describe('Cookie name') }),
        z.strictObject({ query: z.string().min(1).describe('Query parameter name') }),
      ]),
    )
    .min(1)
    .default(['header'])
    .describe(
      'Where protected routes find the token, in order: header (Authorization: Bearer), {cookie: NAME}, {query: NAME}; query tokens are removed before forwarding',
    ),
  apiKey: z
    .strictObject({
      header: z.string().min(1).optional().describe('Request header holding the API key, e.g. X-API-Key'),
      query: z.string().min(1).optional().describe('Query parameter holding the API key; removed before forwarding'),
    })
    .optional()
    .describe(
      'API key authentication for protected routes (docs/consumers.md): the key is read from this header or query parameter (at least one)',
    ),
  planClaim: z
    .string()
    .min(1)
    .optional()
    .describe("Claim of a token naming the caller's plan, for quotas by plan; without it a token's caller has no plan"),
  rolesClaim: z
    .string()
    .min(1)
    .optional()
    .describe('Claim holding the roles that require.roles checks (a name, else a dot path); default roles, then role'),
  secret: z.string().min(1).optional().describe('HMAC secret for local JWT validation (HS256/384/512)'),
  jwksUrl: z.string().min(1).optional().describe('JWKS endpoint for RS*, PS*, ES* and EdDSA tokens'),
  introspection: IntrospectionSchema.optional().describe(
    'OAuth2 token introspection (RFC 7662): bearer tokens are checked by the authorization server; not together with secret, jwksUrl or authService',
  ),
  issuer: stringOrList
    .optional()
    .describe('Accepted "iss" value(s), checked when set (local JWT, JWKS and introspection modes)'),
  audience: stringOrList
    .optional()
    .describe('Accepted "aud" value(s), checked when set (local JWT, JWKS and introspection modes)'),
  clockToleranceSec: z.number().min(0).default(0).describe('Leeway in seconds for exp and nbf'),
  closeWebSocketsAtExpiry: z
    .boolean()
    .default(true)
    .describe(
      'Close a WebSocket tunnel of a protected route when its token expires (exp plus clockToleranceSec): the client gets close code 1008 "token expired", the backend connection closes',
    ),
  jwksCooldownSec: z
    .number()
    .min(0)
    .default(30)
    .describe('Minimum seconds between two JWKS refetches caused by a token with an unknown kid'),
  stripHeaders: z
    .array(z.string().min(1))
    .default(DEFAULT_STRIP_HEADERS)
    .describe('Client headers removed before auth runs; a list here replaces the default list'),
  algorithm: z
    .string()
    .min(1)
    .optional()
    .describe(
      'tainha-gateway: not used, as there; the key decides the algorithm (secret: HS256/384/512; jwksUrl: the signing key)',
    ),
});
