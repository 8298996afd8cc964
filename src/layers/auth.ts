/**
 * The auth step of a protected route, for every request it gets (WebSocket handshakes too): only
 * routes that require a token get this layer (decided at config load), so public routes never
 * validate tokens or call the auth service. The token is taken from where `auth.tokenFrom` says
 * (auth/token-sources.ts), and a route with `require:` rules also checks the valid token's claims
 * against them (auth/requirements.ts): 403 when they fall short. On success the
 * claim headers ride on the exchange to the endpoint; on refusal the outcome's complete response
 * is written and the chain stops.
 *
 * With `auth.apiKey` (docs/consumers.md), a request may present an API key instead: a key is
 * looked up in the key store (auth/key-store.ts) and its consumer's claims stand in for a token's,
 * under the same `require:` rules. One credential per request: a key beside a token, or a key sent
 * twice, is refused 400 before anything is checked. A request with neither goes the token way when
 * a token mode is configured (its 401 then names both schemes), else gets 401 for a missing key.
 */
import type { Consumer, Exchange, Layer } from '../pipeline/types.js';
import type { EventBus } from '../observability/events.js';
import { reportAuthResult } from '../auth/authenticator.js';
import { gatewayRefusal } from '../auth/refusal.js';
import type { Authenticator, AuthOutcome, ClaimCheck } from '../auth/types.js';
import type { TokenSources } from '../auth/token-sources.js';
import type { KeyHolder } from '../auth/key-store.js';
import type { ApiKeys } from '../auth/api-keys.js';
import { keyOutcomes } from '../auth/key-outcomes.js';
import { answersAsGrpc, sendGrpcRefusal } from '../response/grpc-status.js';

/** A token cookie or parameter sent twice (auth/token-sources.ts). */
const SEVERAL_TOKENS = gatewayRefusal('GW_AUTH_TOKEN_REPEATED', 'a token cookie or query parameter sent twice');

const NO_CLAIMS: Readonly<Record<string, unknown>> = Object.freeze({});

/** A key beside a token, or a key sent twice (auth/api-key-source.ts). */
const SEVERAL_CREDENTIALS = gatewayRefusal('GW_AUTH_CREDENTIALS_AMBIGUOUS', 'an API key sent twice, or beside a token');

/** What a route adds to plain authentication, each compiled at config load. */
export interface RouteAuthRules {
  readonly checkClaims?: ClaimCheck | undefined;
  readonly tokenSources?: TokenSources | undefined;
  /** API keys (`auth.apiKey`); undefined when keys are not accepted. */
  readonly apiKeys?: ApiKeys | undefined;
  /** The claim naming a token holder's plan (`auth.planClaim`), for `ex.consumer`. */
  readonly planClaim?: string | undefined;
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

/** A token holder as a consumer: its `sub`, and its plan from `planClaim`; undefined without a string `sub`. */
function tokenConsumer(
  claims: Readonly<Record<string, unknown>> | undefined,
  planClaim: string | undefined,
): Consumer | undefined {
  const sub = claims?.sub;
  if (typeof sub !== 'string') return undefined;
  const plan = planClaim === undefined ? undefined : claims![planClaim];
  return { id: sub, plan: typeof plan === 'string' ? plan : undefined };
}

/**
 * Authenticates each request before `next`; answers the refusal itself. `authenticator` validates
 * tokens; undefined when only API keys are accepted.
 */
export function authLayer(
  authenticator: Authenticator | undefined,
  events: EventBus,
  rules: RouteAuthRules = {},
): Layer {
  const authorize = authenticator === undefined ? undefined : authorizer(authenticator, rules.checkClaims);
  const { tokenSources: sources, apiKeys, planClaim } = rules;
  const keys = apiKeys === undefined ? undefined : keyOutcomes(apiKeys.source, rules.checkClaims);
  return (next) => {
    const decide = (ex: Exchange, outcome: AuthOutcome, holder?: KeyHolder): Promise<void> => {
      const refusal = settle(events, ex, outcome);
      if (refusal === undefined) {
        ex.consumer = holder !== undefined ? holder.consumer : tokenConsumer(ex.claims, planClaim);
        return next(ex);
      }
      const { res, req } = ex;
      // The body the client sent is not wanted: drain it so the connection can be reused.
      req.resume();
      if (answersAsGrpc(res)) sendGrpcRefusal(res, refusal);
      else if (!res.headersSent && !res.destroyed) {
        res.writeHead(refusal.status, refusal.headers);
        res.end(refusal.body);
      }
      return DONE;
    };
    // A cached token answers without a promise: the route goes on in the same turn.
    return (ex) => {
      let key: string | undefined;
      if (apiKeys !== undefined) {
        const taken = apiKeys.source.take(ex.req, ex.rawQuery);
        if (taken === undefined) return decide(ex, SEVERAL_CREDENTIALS);
        ex.rawQuery = taken.rest;
        key = taken.key;
      }
      if (sources !== undefined) {
        const rest = sources.take(ex.req, ex.rawQuery);
        if (rest === undefined) return decide(ex, SEVERAL_TOKENS);
        ex.rawQuery = rest;
      }
      if (key !== undefined) {
        // Any Authorization header beside a key is a second credential, whatever its scheme.
        if (ex.req.headers.authorization !== undefined) return decide(ex, SEVERAL_CREDENTIALS);
        const holder = apiKeys!.store.find(key);
        return decide(ex, keys!.of(holder), holder);
      }
      if (authorize === undefined) return decide(ex, keys!.missing);
      const outcome = authorize(ex.req, ex.requestId, ex.route.id);
      if (keys === undefined)
        return outcome instanceof Promise ? outcome.then((o) => decide(ex, o)) : decide(ex, outcome);
      // Neither credential: a 401 for a missing token names the key scheme too.
      const either = (o: AuthOutcome) =>
        decide(ex, !o.ok && o.code === 'GW_AUTH_MISSING' ? keys.withKeyChallenge(o) : o);
      return outcome instanceof Promise ? outcome.then(either) : either(outcome);
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
