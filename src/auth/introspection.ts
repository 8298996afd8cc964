/**
 * Introspection mode (`config.auth.introspection`, RFC 7662): the gateway asks the authorization
 * server whether a bearer token is active, `POST {url}` with the form
 * `token=<token>&token_type_hint=access_token`, authenticated as a client with HTTP Basic
 * (RFC 7662 2.1, RFC 6749 2.3.1: id and secret form-encoded, then base64). The answer is read by
 * ./introspection-answer.ts: active admits with the answer's fields as claims, inactive is 401,
 * and no usable answer (refused, silent past `timeoutSec`, another status, a body that is not
 * an answer or larger than INTROSPECTION_MAX_BODY_BYTES) is 503.
 *
 * Design note (cache and single flight). Active answers are kept in a bounded LRU
 * (./token-cache.ts) keyed by a SHA-256 of `Bearer <token>`, never the token itself, so a heap
 * dump or a debugger shows no usable credential; an entry lives at most `cacheMaxSec` and never
 * past the answer's `exp` (with `clockToleranceSec`, as a JWT). Inactive answers and failures are
 * not cached: a token refused now may be valid in a moment (issued a moment ago, or the endpoint
 * back up), and a flood of made-up tokens would only push the valid ones out. While a token's
 * call is in flight, every other request carrying it waits for that call (one call per token, not
 * one per request, when a client opens many requests with a new token at once). A revoked token
 * stays accepted until its entry ends: `cacheMaxSec` is that window (docs/authentication.md).
 */
import { hash } from 'node:crypto';
import { Pool } from 'undici';
import type { Logger } from '../observability/logger.js';
import type { EventBus } from '../observability/events.js';
import { appendTraceHeaders } from '../observability/trace-context.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import { parseService } from '../config/syntax/service.js';
import { redactUrl } from '../config/syntax/redact-url.js';
import { callStarted } from '../upstream/call/pool-use.js';
import { readCall } from '../upstream/call/request.js';
import { skipInformationalConnector } from '../upstream/skip-informational.js';
import { createSingleFlight } from '../mapping/single-flight.js';
import type { Authenticator, AuthOutcome } from './types.js';
import { claimHeaders, type SkippedClaim } from './claim-headers.js';
import { gatewayRefusal } from './refusal.js';
import { bearerToken } from './jwt-authenticator.js';
import { createTokenCache, type AuthSuccess } from './token-cache.js';
import { INVALID_TOKEN_HEADERS, readIntrospectionAnswer, type AnswerChecks } from './introspection-answer.js';

/** An answer larger than this is no introspection answer (they are a few hundred bytes): 503. */
export const INTROSPECTION_MAX_BODY_BYTES = 64 * 1024;

export interface IntrospectionOptions extends AnswerChecks {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Longest life of a cached active answer; 0: no cache. */
  readonly cacheMaxSec: number;
  /** Connect, send and read the whole answer within this time, else 503. */
  readonly timeoutSec: number;
  readonly logger: Logger;
  /** The process-level registry; its pool for the endpoint's origin survives reloads. */
  readonly upstreams?: UpstreamRegistry | undefined;
  /** Where answered calls are reported ('upstream:response', call 'auth'). */
  readonly events?: EventBus | undefined;
  /** `telemetry.propagation`: the call carries the request's trace. */
  readonly propagateTrace?: boolean;
  /** `tls.clientSubjectHeader`: no claim header may take its name. */
  readonly clientSubjectHeader?: string | undefined;
  /** Milliseconds since the epoch; injected by tests to move past `exp` without sleeping. */
  readonly now?: () => number;
  /** Bound of the cache in tokens (token-cache.ts's default otherwise). */
  readonly maxEntries?: number;
}

const MISSING = gatewayRefusal('GW_AUTH_MISSING', 'no Authorization header', {
  'www-authenticate': 'Bearer realm="portico"',
});
const NOT_BEARER = gatewayRefusal('GW_AUTH_INVALID', 'Authorization is not "Bearer <token>"', INVALID_TOKEN_HEADERS);

/** The cache and single-flight key of an Authorization value: never the token itself. */
function keyOf(header: string): string {
  return hash('sha256', header, 'base64');
}

/** RFC 6749 2.3.1: the client id and secret are form-encoded before they are joined and base64-encoded. */
export function basicCredentials(clientId: string, clientSecret: string): string {
  const encode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64')}`;
}

/** An Authenticator asking the introspection endpoint about each token it has no fresh answer for. */
export function createIntrospectionAuthenticator(options: IntrospectionOptions): Authenticator {
  const url = new URL(options.url);
  const origin = parseService(url.origin);
  if ('error' in origin) throw new Error(`unvalidated introspection url: ${origin.error}`);
  const ownPool =
    options.upstreams === undefined
      ? new Pool(origin.key, { connections: 64, keepAliveTimeout: 4_000, connect: skipInformationalConnector() })
      : undefined;
  const upstream = ownPool === undefined ? options.upstreams!.forOrigin(origin) : undefined;
  const now = options.now ?? Date.now;
  const cache =
    options.cacheMaxSec > 0
      ? createTokenCache({
          clockToleranceSec: options.clockToleranceSec,
          now,
          maxTtlMs: options.cacheMaxSec * 1000,
          ...(options.maxEntries === undefined ? {} : { maxEntries: options.maxEntries }),
        })
      : undefined;
  const flights = createSingleFlight<AuthOutcome>();
  const call: EndpointCall = {
    options,
    path: `${url.pathname}${url.search}`,
    shownUrl: redactUrl(options.url),
    hostHeader: origin.hostHeader,
    originKey: origin.key,
    authorization: basicCredentials(options.clientId, options.clientSecret),
    target: () => (upstream === undefined ? { dispatcher: ownPool! } : { pool: callStarted(upstream) }),
    now,
  };

  const ask = (
    key: string,
    token: string,
    req: Parameters<Authenticator['authenticate']>[0],
    requestId: string,
    routeId: string | undefined,
  ) =>
    flights.run(key, async () => {
      const { outcome, bytes } = await introspect(call, token, req, requestId, routeId);
      if (outcome.ok && cache !== undefined) cache.set(key, { exp: outcome.claims?.exp }, outcome, bytes);
      return outcome;
    }).promise;

  return {
    // A token with a fresh cached answer is answered synchronously: no promise on the hot path.
    authenticate(req, requestId, routeId) {
      const header = req.headers.authorization;
      if (header === undefined || header === '') return MISSING;
      // Clients send `Bearer <token>` as the cache stores it: such a header is looked up as it is.
      const first = keyOf(header);
      const hit = cache?.get(first);
      if (hit !== undefined) return hit;
      const token = bearerToken(header);
      if (token === undefined) return NOT_BEARER;
      const normal = `Bearer ${token}`;
      if (normal === header) return ask(first, token, req, requestId, routeId);
      const key = keyOf(normal);
      return cache?.get(key) ?? ask(key, token, req, requestId, routeId);
    },
    ...(ownPool === undefined ? {} : { close: () => ownPool.close() }),
  };
}

/** What one introspection call needs, fixed per authenticator. */
interface EndpointCall {
  readonly options: IntrospectionOptions;
  readonly path: string;
  /** The URL as logs and details show it (its query redacted). */
  readonly shownUrl: string;
  readonly hostHeader: string;
  readonly originKey: string;
  /** `Basic ...`, computed once; never logged. */
  readonly authorization: string;
  readonly target: () => Parameters<typeof readCall>[0];
  readonly now: () => number;
}

/** An outcome, with the size of the answer it was read from (for the cache's byte bound). */
interface Introspected {
  readonly outcome: AuthOutcome;
  readonly bytes: number;
}

/** Asks the endpoint about `token` and turns the answer into an outcome; never rejects. */
async function introspect(
  call: EndpointCall,
  token: string,
  req: Parameters<Authenticator['authenticate']>[0],
  requestId: string,
  routeId: string | undefined,
): Promise<Introspected> {
  const { options, shownUrl } = call;
  const { logger, events } = options;
  const timeoutMs = options.timeoutSec * 1000;
  const abort = new AbortController();
  // One timer for connect, head and body together: "no complete answer within timeoutSec".
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const headers = [
    'host',
    call.hostHeader,
    'content-type',
    'application/x-www-form-urlencoded',
    'accept',
    'application/json',
    'authorization',
    call.authorization,
    'x-request-id',
    requestId,
  ];
  if (options.propagateTrace === true) appendTraceHeaders(req, headers);
  const body = new URLSearchParams({ token, token_type_hint: 'access_token' }).toString();
  const report = events && { events, routeId: routeId ?? '', origin: call.originKey, call: 'auth' as const };
  try {
    const request = { method: 'POST' as const, path: call.path, headers, body, signal: abort.signal };
    return await readCall(call.target(), request, report, async (answer) => {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of answer.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > INTROSPECTION_MAX_BODY_BYTES) {
          answer.body.destroy();
          return failed(logger, requestId, `introspection answer larger than ${INTROSPECTION_MAX_BODY_BYTES} bytes`);
        }
        chunks.push(chunk);
      }
      if (answer.statusCode !== 200)
        return failed(
          logger,
          requestId,
          `introspection endpoint ${shownUrl} answered ${answer.statusCode}`,
          // The endpoint refuses the gateway itself: its client credentials are what to check.
          answer.statusCode === 401 || answer.statusCode === 403 ? 'check clientId and clientSecret' : undefined,
        );
      const verdict = readIntrospectionAnswer(Buffer.concat(chunks), options, Math.floor(call.now() / 1000));
      if (!verdict.active) {
        if (verdict.refusal.code === 'GW_AUTH_UNAVAILABLE')
          logger.warn(
            { reqId: requestId, url: shownUrl, why: verdict.refusal.detail },
            'introspection: unusable answer',
          );
        return { outcome: verdict.refusal, bytes: size };
      }
      const skipped: SkippedClaim[] = [];
      const claimsAsHeaders = claimHeaders(verdict.claims, skipped, options.clientSubjectHeader);
      if (skipped.length > 0) logger.warn({ reqId: requestId, skipped }, 'auth: claims skipped, not valid as headers');
      const outcome: AuthSuccess = { ok: true, claimHeaders: claimsAsHeaders, claims: verdict.claims };
      return { outcome, bytes: size };
    });
  } catch (err) {
    return failed(
      logger,
      requestId,
      abort.signal.aborted
        ? `introspection endpoint ${shownUrl} gave no answer within ${timeoutMs} ms`
        : `introspection endpoint ${shownUrl} unreachable: ${(err as Error).message}`,
    );
  } finally {
    clearTimeout(timer);
  }
}

/** 503, logged with why (never the token or the client secret). */
function failed(logger: Logger, requestId: string, detail: string, hint?: string): Introspected {
  logger.warn({ reqId: requestId, ...(hint === undefined ? {} : { hint }) }, `introspection: ${detail}`);
  return { outcome: gatewayRefusal('GW_AUTH_UNAVAILABLE', detail), bytes: 0 };
}
