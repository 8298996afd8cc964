/**
 * The auth step of a protected route, for every request it gets (WebSocket handshakes too): only
 * routes that require a token get this layer (decided at config load), so public routes never
 * validate tokens or call the auth service. The token is taken from where `auth.tokenFrom` says
 * (auth/token-sources.ts), and a route with `require:` rules also checks the valid token's claims
 * against them (auth/requirements.ts): 403 when they fall short. On success the
 * claim headers ride on the exchange to the endpoint; on refusal the outcome's complete response
 * is written and the chain stops.
 */
import type { Exchange, Layer } from '../pipeline/types.js';
import type { EventBus } from '../observability/events.js';
import { reportAuthResult } from '../auth/authenticator.js';
import { gatewayRefusal } from '../auth/refusal.js';
import type { Authenticator, AuthOutcome, ClaimCheck } from '../auth/types.js';
import type { TokenSources } from '../auth/token-sources.js';

/** A token cookie or parameter sent twice (auth/token-sources.ts). */
const SEVERAL_TOKENS = gatewayRefusal('GW_AUTH_TOKEN_REPEATED', 'a token cookie or query parameter sent twice');

const NO_CLAIMS: Readonly<Record<string, unknown>> = Object.freeze({});

/** What a route adds to plain authentication, each compiled at config load. */
export interface RouteAuthRules {
  readonly checkClaims?: ClaimCheck | undefined;
  readonly tokenSources?: TokenSources | undefined;
}

const DONE: Promise<void> = Promise.resolve();

type Refusal = Extract<AuthOutcome, { ok: false }>;

/**
 * Reports the outcome and records it on the exchange: the claims when it admits, the error code
 * when it refuses. Returns the refusal to answer, undefined to go on.
 */
function settle(events: EventBus, x: Exchange, outcome: AuthOutcome): Refusal | undefined {
  reportAuthResult(events, x.requestId, x.route.id, outcome);
  if (!outcome.ok) {
    if (outcome.code !== undefined) x.errorCode = outcome.code;
    return outcome;
  }
  if (outcome.claimHeaders.length > 0) x.claimHeaders = outcome.claimHeaders;
  x.claims = outcome.claims;
  return undefined;
}

/** Authenticates each request before `next`; answers the refusal itself. */
export function authLayer(authenticator: Authenticator, events: EventBus, rules: RouteAuthRules = {}): Layer {
  const authorize = authorizer(authenticator, rules.checkClaims);
  const sources = rules.tokenSources;
  return (next) => {
    const decide = (ex: Exchange, outcome: AuthOutcome): Promise<void> => {
      const refusal = settle(events, ex, outcome);
      if (refusal === undefined) return next(ex);
      const { res, req } = ex;
      // The body the client sent is not wanted: drain it so the connection can be reused.
      req.resume();
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(refusal.status, refusal.headers);
        res.end(refusal.body);
      }
      return DONE;
    };
    // A cached token answers without a promise: the route goes on in the same turn.
    return (ex) => {
      if (sources !== undefined) {
        const rest = sources.take(ex.req, ex.rawQuery);
        if (rest === undefined) return decide(ex, SEVERAL_TOKENS);
        ex.rawQuery = rest;
      }
      const outcome = authorize(ex.req, ex.requestId, ex.route.id);
      return outcome instanceof Promise ? outcome.then((o) => decide(ex, o)) : decide(ex, outcome);
    };
  };
}

/** The authenticator alone, or followed by the route's claim check (chosen once per route). */
function authorizer(authenticator: Authenticator, checkClaims: ClaimCheck | undefined): Authenticator['authenticate'] {
  if (checkClaims === undefined)
    return (req, requestId, routeId) => authenticator.authenticate(req, requestId, routeId);
  const check = (outcome: AuthOutcome): AuthOutcome => {
    if (!outcome.ok) return outcome;
    const why = checkClaims(outcome.claims ?? NO_CLAIMS);
    return why === undefined ? outcome : gatewayRefusal('GW_AUTH_FORBIDDEN', why);
  };
  return (req, requestId, routeId) => {
    const outcome = authenticator.authenticate(req, requestId, routeId);
    return outcome instanceof Promise ? outcome.then(check) : check(outcome);
  };
}
