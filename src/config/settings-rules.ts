/**
 * Rules on `config:` that the schema cannot express: the base path's shape and auth settings that must fit together (tainha-gateway's keys: tainha.ts).
 */
import { redactUrl } from './syntax/redact-url.js';
import type { AddProblem } from './problems.js';
import { isRecord } from './raw-value.js';
import { operationsChecks } from './ops-checks.js';
import { checkService } from './service-rule.js';

/** The prefix of every route: `config.basePath` when it is text, else the default; "/" means none. */
export function routePrefix(raw: unknown): string {
  const config = isRecord(raw) && isRecord(raw.config) ? raw.config : {};
  const basePath = typeof config.basePath === 'string' ? config.basePath : '/api';
  return basePath === '/' ? '' : basePath;
}

/** Checks `config:` (and the operational keys of routes, which ops-checks reads beside it). */
export function settingsRules(raw: Record<string, unknown>, at: AddProblem): void {
  const config = isRecord(raw.config) ? raw.config : {};
  const basePath = config.basePath;
  if (
    typeof basePath === 'string' &&
    basePath !== '' &&
    (!basePath.startsWith('/') || (basePath.endsWith('/') && basePath !== '/') || /[{}?#]/.test(basePath))
  ) {
    at(
      ['config', 'basePath'],
      `config.basePath: "${basePath}" must start with "/", not end with "/", and hold no {param}, "?" or "#" (use "" for no prefix)`,
    );
  }

  operationsChecks(config, raw.routes, at);

  const auth = isRecord(config.auth) ? config.auth : {};
  if (
    auth.defaultProtected === true &&
    !auth.secret &&
    !auth.jwksUrl &&
    !auth.authService &&
    !auth.introspection &&
    !auth.apiKey
  ) {
    at(
      ['config', 'auth', 'defaultProtected'],
      'config.auth.defaultProtected is true but no secret, jwksUrl, authService, introspection or apiKey is set to authenticate requests',
    );
  }
  if (typeof auth.authService === 'string') checkService(auth.authService, ['config', 'auth', 'authService'], at);
  if (typeof auth.authPath === 'string' && !auth.authPath.startsWith('/'))
    at(['config', 'auth', 'authPath'], 'config.auth.authPath: must start with "/"');
  if (typeof auth.jwksUrl === 'string') jwksUrlRule(auth.jwksUrl, at);
  if (isRecord(auth.introspection)) introspectionRules(auth, auth.introspection, at);
}

/** `config.auth.jwksUrl`: an http(s) URL without credentials, which the key fetch never sends. */
function jwksUrlRule(jwksUrl: string, at: AddProblem): void {
  const path = ['config', 'auth', 'jwksUrl'];
  if (!/^https?:\/\/[^/]/i.test(jwksUrl))
    at(path, `config.auth.jwksUrl: "${redactUrl(jwksUrl)}" must be an http:// or https:// URL`);
  else if (/^https?:\/\/[^/?#]*@/i.test(jwksUrl))
    at(
      path,
      `config.auth.jwksUrl: "${redactUrl(jwksUrl)}" must not contain credentials (the keys are fetched without them)`,
    );
}

/** The token modes that cannot sit beside introspection: each decides alone whether a token is valid. */
const OTHER_TOKEN_MODES = ['secret', 'jwksUrl', 'authService'] as const;

/**
 * `config.auth.introspection`: an http(s) URL without credentials (the gateway authenticates
 * with clientId and clientSecret), and the only token mode: beside another one, which of the two
 * decides would be a guess, so both places are reported.
 */
function introspectionRules(
  auth: Record<string, unknown>,
  introspection: Record<string, unknown>,
  at: AddProblem,
): void {
  const url = introspection.url;
  const urlPath = ['config', 'auth', 'introspection', 'url'];
  if (typeof url === 'string') {
    if (!/^https?:\/\/[^/]/i.test(url) || !URL.canParse(url))
      at(urlPath, `config.auth.introspection.url: "${redactUrl(url)}" must be an http:// or https:// URL`);
    else if (/^https?:\/\/[^/?#]*@/i.test(url))
      at(
        urlPath,
        `config.auth.introspection.url: "${redactUrl(url)}" must not contain credentials (use clientId and clientSecret)`,
      );
  }
  for (const mode of OTHER_TOKEN_MODES) {
    if (auth[mode] === undefined) continue;
    at(
      ['config', 'auth', 'introspection'],
      `config.auth.introspection: cannot be used with config.auth.${mode}; choose one way to validate tokens`,
    );
    at(
      ['config', 'auth', mode],
      `config.auth.${mode}: cannot be used with config.auth.introspection; choose one way to validate tokens`,
    );
  }
}
