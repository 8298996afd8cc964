/**
 * The authentication part of a route's recipe (pipeline/build.ts): a protected route gets the auth
 * layer with what its configuration validates (tokens, API keys, its `require:` rules); a route that
 * reads no credential gets nothing, except the removal of an API key's query parameter when keys
 * may come in the query (docs/consumers.md "API keys").
 */
import type { EventBus } from '../observability/events.js';
import type { Authenticator } from '../auth/types.js';
import type { TokenSources } from '../auth/token-sources.js';
import type { ApiKeys } from '../auth/api-keys.js';
import type { CompiledRoute, Layer, PipelineConfig } from './types.js';
import { authLayer } from '../layers/auth.js';
import { stripKeyQueryLayer } from '../layers/strip-key-query.js';

/** What the auth layers of a configuration's routes share (PipelineDeps holds it). */
export interface AuthDeps {
  readonly config: PipelineConfig;
  readonly events: EventBus;
  readonly authenticator: Authenticator | undefined;
  readonly tokenSources: TokenSources | undefined;
  readonly apiKeys: ApiKeys | undefined;
}

/** The route's authentication layers, outermost first: none, one, or the key-stripping one. */
export function authLayers(route: CompiledRoute, deps: AuthDeps): Layer[] {
  if (!route.requiresAuth) {
    // A key in the query of a route that reads none still goes no further than the gateway.
    const source = deps.apiKeys?.source;
    return source?.query === undefined ? [] : [stripKeyQueryLayer(source)];
  }
  // Validation refuses a protected route without secret, jwksUrl, authService, introspection or apiKey.
  if (deps.authenticator === undefined && deps.apiKeys === undefined)
    throw new Error(`route ${route.id} requires auth but no authenticator is configured`);
  return [
    authLayer(deps.authenticator, deps.events, {
      checkClaims: route.checkClaims,
      tokenSources: deps.tokenSources,
      apiKeys: deps.apiKeys,
      planClaim: deps.config.settings.auth.planClaim,
    }),
  ];
}
