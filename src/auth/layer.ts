/**
 * The auth step of a protected route, for its HTTP requests and its WebSocket upgrades: only
 * routes that require a token get this layer (decided at config load), so public routes never
 * validate tokens or call the auth service. The token is taken from where `auth.tokenFrom` says
 * (auth/token-sources.ts), and a route with `require:` rules also checks the valid token's claims
 * against them (auth/requirements.ts): 403 when they fall short. On success the
 * claim headers ride on the exchange to the endpoint; on refusal the outcome's complete response
 * is written and the chain stops.
 */
import type { Layer, UpgradeLayer } from '../pipeline/types.js';
import type { EventBus } from '../observability/events.js';
import { sendUpgradeAnswer } from '../server/socket-response.js';
import { reportAuthResult } from './authenticator.js';
import { gatewayRefusal } from './refusal.js';
import type { ClaimCheck } from './requirements.js';
import type { TokenSources } from './token-sources.js';
import type { AuthOutcome, Authenticator } from './types.js';

const NO_CLAIMS: Readonly<Record<string, unknown>> = Object.freeze({});

/** What a route adds to plain authentication, each compiled at config load. */
export interface RouteAuthRules {
  readonly checkClaims?: ClaimCheck | undefined;
  readonly tokenSources?: TokenSources | undefined;
}

/** Authenticates each request before `next`; answers the refusal itself. */
export function authLayer(authenticator: Authenticator, events: EventBus, rules: RouteAuthRules = {}): Layer {
  const authorize = authorizer(authenticator, rules.checkClaims);
  const sources = rules.tokenSources;
  return (next) => async (ex) => {
    if (sources !== undefined) ex.rawQuery = sources.take(ex.req, ex.rawQuery);
    const outcome = await authorize(ex.req, ex.requestId, ex.route.id);
    reportAuthResult(events, ex.requestId, ex.route.id, outcome);
    if (outcome.ok) {
      if (outcome.claimHeaders.length > 0) ex.claimHeaders = outcome.claimHeaders;
      ex.claims = outcome.claims;
      return next(ex);
    }
    if (outcome.code !== undefined) ex.errorCode = outcome.code;
    const { res, req } = ex;
    // The body the client sent is not wanted: drain it so the connection can be reused.
    req.resume();
    if (res.headersSent || res.destroyed) return;
    res.writeHead(outcome.status, outcome.headers);
    res.end(outcome.body);
  };
}

/** Authenticates each upgrade before `next`; writes the refusal onto the socket itself. */
export function authUpgradeLayer(
  authenticator: Authenticator,
  events: EventBus,
  rules: RouteAuthRules = {},
): UpgradeLayer {
  const authorize = authorizer(authenticator, rules.checkClaims);
  const sources = rules.tokenSources;
  return (next) => async (ux) => {
    if (sources !== undefined) ux.rawQuery = sources.take(ux.req, ux.rawQuery);
    const outcome = await authorize(ux.req, ux.requestId, ux.route.id);
    reportAuthResult(events, ux.requestId, ux.route.id, outcome);
    if (outcome.ok) {
      if (outcome.claimHeaders.length > 0) ux.claimHeaders = outcome.claimHeaders;
      ux.claims = outcome.claims;
      return next(ux);
    }
    if (outcome.code !== undefined) ux.errorCode = outcome.code;
    sendUpgradeAnswer(ux, outcome.status, outcome.headers, outcome.body);
  };
}

/** The authenticator alone, or followed by the route's claim check (chosen once per route). */
function authorizer(authenticator: Authenticator, checkClaims: ClaimCheck | undefined): Authenticator['authenticate'] {
  if (checkClaims === undefined)
    return (req, requestId, routeId) => authenticator.authenticate(req, requestId, routeId);
  return async (req, requestId, routeId): Promise<AuthOutcome> => {
    const outcome = await authenticator.authenticate(req, requestId, routeId);
    if (!outcome.ok) return outcome;
    const why = checkClaims(outcome.claims ?? NO_CLAIMS);
    return why === undefined ? outcome : gatewayRefusal('GW_AUTH_FORBIDDEN', why);
  };
}
