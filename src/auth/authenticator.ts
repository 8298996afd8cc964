/**
 * Chooses the configuration's Authenticator (auth/types.ts): `introspection`, which validation
 * allows only alone, else in the priority order `authService`, then `jwksUrl`, then `secret`; and
 * reports each outcome as an `auth:result` event.
 */
import type { CompiledConfig } from '../config/types.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import type { AuthOutcome, Authenticator } from './types.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import { isOrigin, parseService } from '../config/syntax/service.js';
import { createLocalJwtAuthenticator } from './local-jwt.js';
import { createJwksAuthenticator } from './jwks.js';
import { createJwksRegistry, type JwksRegistry } from './jwks-registry.js';
import { createAuthServiceAuthenticator } from './auth-service.js';
import { createIntrospectionAuthenticator } from './introspection.js';
import { refuseSeveralAuthorization } from './single-authorization.js';

export interface AuthenticatorDeps {
  readonly events: EventBus;
  readonly logger: Logger;
  /** Process-level pools: the auth service's keep-alive pool survives reloads. Without it, one is made. */
  readonly upstreams?: UpstreamRegistry;
  /** Process-level JWKS key sources: keys survive reloads. Without it, a private one is made. */
  readonly jwks?: JwksRegistry;
}

/**
 * The Authenticator of a configuration, or undefined when it names no way to validate tokens.
 * Every mode refuses a request with several Authorization headers first (single-authorization.ts).
 * @example const auth = createAuthenticator(config.settings, { events, logger, upstreams, jwks });
 */
export function createAuthenticator(
  settings: CompiledConfig['settings'],
  deps: AuthenticatorDeps,
): Authenticator | undefined {
  const inner = createModeAuthenticator(settings, deps);
  return inner === undefined ? undefined : refuseSeveralAuthorization(inner);
}

function createModeAuthenticator(
  settings: CompiledConfig['settings'],
  deps: AuthenticatorDeps,
): Authenticator | undefined {
  const auth = settings.auth;
  const { logger } = deps;
  const clientSubjectHeader = settings.tls?.clientSubjectHeader;
  if (auth.introspection !== undefined) {
    return createIntrospectionAuthenticator({
      ...auth.introspection,
      issuer: auth.issuer,
      audience: auth.audience,
      clockToleranceSec: auth.clockToleranceSec,
      logger,
      upstreams: deps.upstreams,
      events: deps.events,
      propagateTrace: settings.telemetry.propagation,
      clientSubjectHeader,
    });
  }
  if (auth.authService !== undefined) {
    const ignored = [
      auth.secret && 'secret',
      auth.jwksUrl && 'jwksUrl',
      auth.issuer && 'issuer',
      auth.audience && 'audience',
    ].filter(Boolean);
    // In delegated mode the gateway ignores `secret`: the auth service decides.
    if (ignored.length > 0) logger.info({ ignored }, 'auth: delegated mode; these auth settings are ignored');
    return createAuthServiceAuthenticator({
      authService: auth.authService,
      authPath: auth.authPath,
      logger,
      upstreams: deps.upstreams,
      propagateTrace: settings.telemetry.propagation,
      events: deps.events,
      clientSubjectHeader,
    });
  }
  if (auth.jwksUrl !== undefined) {
    if (auth.secret !== undefined) logger.info('auth: jwksUrl takes priority; secret is ignored');
    const jwksOrigin = parseService(new URL(auth.jwksUrl).origin);
    const pool =
      deps.upstreams !== undefined && isOrigin(jwksOrigin)
        ? deps.upstreams.forOrigin(jwksOrigin).pick().dispatcher
        : undefined;
    const jwks = deps.jwks ?? createJwksRegistry({ logger });
    const keys = jwks.keySource({ url: auth.jwksUrl, cooldownSec: auth.jwksCooldownSec, pool });
    return createJwksAuthenticator({
      keys,
      issuer: auth.issuer,
      audience: auth.audience,
      clockToleranceSec: auth.clockToleranceSec,
      logger,
      clientSubjectHeader,
    });
  }
  if (auth.secret !== undefined) {
    return createLocalJwtAuthenticator({
      secret: auth.secret,
      issuer: auth.issuer,
      audience: auth.audience,
      clockToleranceSec: auth.clockToleranceSec,
      logger,
      clientSubjectHeader,
    });
  }
  return undefined;
}

/** What the auth:result event says about an outcome. */
export function outcomeName(
  outcome: AuthOutcome,
): 'ok' | 'missing' | 'invalid' | 'unavailable' | 'denied' | 'forbidden' {
  if (outcome.ok) return 'ok';
  switch (outcome.code) {
    case 'GW_AUTH_MISSING':
    case 'GW_AUTH_KEY_MISSING':
      return 'missing';
    case 'GW_AUTH_INVALID':
    case 'GW_AUTH_KEY_INVALID':
    case 'GW_AUTH_AMBIGUOUS':
    case 'GW_AUTH_CREDENTIALS_AMBIGUOUS':
      // Several credentials: none can be trusted, like an invalid one.
      return 'invalid';
    case 'GW_AUTH_UNAVAILABLE':
      return 'unavailable';
    case 'GW_AUTH_FORBIDDEN':
      return 'forbidden';
    default:
      // The auth service's own refusal, relayed.
      return 'denied';
  }
}

/** Emits `auth:result` for one authentication; used by the HTTP layer and the WebSocket upgrade. */
export function reportAuthResult(events: EventBus, requestId: string, routeId: string, outcome: AuthOutcome): void {
  if (!events.has('auth:result')) return;
  const detail = outcome.ok ? undefined : (outcome.detail ?? `status ${outcome.status}`);
  events.emit('auth:result', {
    requestId,
    routeId,
    outcome: outcomeName(outcome),
    ...(detail === undefined ? {} : { detail }),
  });
}
