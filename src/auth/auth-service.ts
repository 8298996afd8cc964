/**
 * Delegated mode (docs/design-decisions.md "Auth"): the gateway asks the operator's auth service
 * `GET {authService}{authPath}` with the client's exact Authorization header and lets the request
 * through only on a 200. A 200 JSON object's string claims become `X-<claim>` headers; an empty body
 * or `{}` adds none. Any other answer goes back to the client as it is (status, body, content type
 * and its other end-to-end headers). No answer within 5 s, or no connection: 503 JSON.
 *
 * Decision: a request without Authorization is still sent to the auth service. Any
 * authentication strategy is meant to be possible on the auth service side, e.g. a session cookie,
 * so the service, not the gateway, decides whether a request with no token is refused. To make
 * such strategies possible the call also carries the client's `Cookie`, and `X-Forwarded-Method` /
 * `X-Forwarded-Uri` (what the client asked for, as Traefik's forwardAuth and nginx auth_request
 * setups send), so the service can decide per route.
 *
 * Like every outgoing call (docs/design-decisions.md "HTTP behaviour"), the call carries the request
 * id and, with `telemetry.propagation` on, a `traceparent` with the request's trace id and a span
 * id of its own (plus the client's `tracestate`); its answer is reported as 'upstream:response'
 * (call 'auth') for the upstream latency metrics.
 */
import { redactUrl } from '../config/syntax/redact-url.js';
import type { IncomingHttpHeaders } from 'node:http';
import { Pool } from 'undici';
import type { Logger } from '../observability/logger.js';
import type { EventBus } from '../observability/events.js';
import { appendTraceHeaders } from '../observability/trace-context.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import { parseService } from '../config/syntax/service.js';
import { HOP_BY_HOP } from '../config/syntax/headers.js';
import { callStarted } from '../upstream/call/pool-use.js';
import { readCall } from '../upstream/call/request.js';
import { skipInformationalConnector } from '../upstream/skip-informational.js';
import type { Authenticator, AuthOutcome } from './types.js';
import { claimHeaders, isClaimsObject, type SkippedClaim } from './claim-headers.js';
import { gatewayRefusal } from './refusal.js';

/** The auth service call times out after 5 seconds. */
export const AUTH_SERVICE_TIMEOUT_MS = 5_000;
/** An auth service answer larger than this is treated as a broken service (503), not relayed. */
export const MAX_AUTH_BODY_BYTES = 1024 * 1024;

export interface AuthServiceOptions {
  /** `host:port`, `http://host:port` or `https://host` (validated at config load). */
  readonly authService: string;
  readonly authPath: string;
  readonly logger: Logger;
  /** The process-level registry; its pool for the auth service's origin survives reloads. */
  readonly upstreams?: UpstreamRegistry | undefined;
  readonly timeoutMs?: number;
  /** `telemetry.propagation`: the call carries the request's trace (a child span id). */
  readonly propagateTrace?: boolean;
  /** Where answered calls are reported ('upstream:response', call 'auth'). */
  readonly events?: EventBus | undefined;
  /** `tls.clientSubjectHeader`: no claim header may take its name. */
  readonly clientSubjectHeader?: string | undefined;
}

/** An Authenticator that delegates every decision to the auth service. */
export function createAuthServiceAuthenticator(options: AuthServiceOptions): Authenticator {
  const origin = parseService(options.authService);
  if ('error' in origin) throw new Error(`unvalidated authService: ${origin.error}`);
  const { authPath, logger } = options;
  const timeoutMs = options.timeoutMs ?? AUTH_SERVICE_TIMEOUT_MS;
  const ownPool =
    options.upstreams === undefined
      ? new Pool(`${origin.protocol}//${origin.hostHeader}`, {
          connections: 64,
          keepAliveTimeout: 4_000,
          connect: skipInformationalConnector(),
        })
      : undefined;
  const upstream = ownPool === undefined ? options.upstreams!.forOrigin(origin) : undefined;
  // For logs and refusal details: the path's query may hold a key from the environment.
  const url = redactUrl(`${origin.key}${authPath}`);
  const propagateTrace = options.propagateTrace ?? false;
  const events = options.events;

  return {
    async authenticate(req, requestId, routeId): Promise<AuthOutcome> {
      const abort = new AbortController();
      // One timer for connect, headers and body together: "no answer within 5 s".
      const timer = setTimeout(() => abort.abort(), timeoutMs);
      const requestHeaders = authServiceRequestHeaders(
        req.headers,
        req.method ?? 'GET',
        req.url ?? '/',
        requestId,
        origin.hostHeader,
      );
      if (propagateTrace) appendTraceHeaders(req, requestHeaders);
      // On a shared upstream pool the call counts like the routes' own calls: they share its connections.
      const target = upstream === undefined ? { dispatcher: ownPool! } : { pool: callStarted(upstream) };
      const report = events && { events, routeId: routeId ?? '', origin: origin.key, call: 'auth' as const };
      try {
        const request = { path: authPath, headers: requestHeaders, signal: abort.signal };
        return await readCall(target, request, report, async ({ statusCode, headers, body }) => {
          const chunks: Buffer[] = [];
          let size = 0;
          for await (const chunk of body as AsyncIterable<Buffer>) {
            size += chunk.length;
            if (size > MAX_AUTH_BODY_BYTES) {
              body.destroy();
              return gatewayRefusal(
                'GW_AUTH_UNAVAILABLE',
                `auth service answer larger than ${MAX_AUTH_BODY_BYTES} bytes`,
              );
            }
            chunks.push(chunk);
          }
          const whole = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
          return interpretAuthAnswer(statusCode, headers, whole, requestId, logger, options.clientSubjectHeader);
        });
      } catch (err) {
        const detail = abort.signal.aborted
          ? `auth service ${url} gave no answer within ${timeoutMs} ms`
          : `auth service ${url} unreachable: ${(err as Error).message}`;
        logger.warn(
          { reqId: requestId, url, err },
          abort.signal.aborted ? 'auth service timeout' : 'auth service unreachable',
        );
        return gatewayRefusal('GW_AUTH_UNAVAILABLE', detail);
      } finally {
        clearTimeout(timer);
      }
    },
    ...(ownPool === undefined ? {} : { close: () => ownPool.close() }),
  };
}

/** The headers of the validation call (flat list, the form undici takes without copying). */
export function authServiceRequestHeaders(
  client: IncomingHttpHeaders,
  method: string,
  uri: string,
  requestId: string,
  hostHeader: string,
): string[] {
  const out = ['host', hostHeader, 'x-request-id', requestId, 'x-forwarded-method', method, 'x-forwarded-uri', uri];
  // The exact Authorization header of the client request.
  if (client.authorization !== undefined) out.push('authorization', client.authorization);
  if (client.cookie !== undefined) out.push('cookie', client.cookie);
  return out;
}

/** Turns the auth service's answer into an outcome: 200 lets through, anything else is relayed. */
export function interpretAuthAnswer(
  status: number,
  headers: IncomingHttpHeaders,
  body: Buffer,
  requestId: string,
  logger: Logger,
  clientSubjectHeader?: string,
): AuthOutcome {
  if (status !== 200) {
    // Any non-200 is returned to the client unchanged.
    return {
      ok: false,
      status,
      headers: relayedHeaders(headers, body.length, requestId, logger),
      body,
      detail: `auth service answered ${status}`,
    };
  }
  const text = body.toString('utf8').trim();
  // An empty body or `{}` lets the request through without extra headers.
  if (text === '') return { ok: true, claimHeaders: [] };
  let claims: unknown;
  try {
    claims = JSON.parse(text);
  } catch {
    claims = undefined;
  }
  if (!isClaimsObject(claims)) {
    // A 200 that is not a claims object breaks the contract: refuse rather than guess (fail closed).
    logger.error(
      { reqId: requestId, body: text.slice(0, 200) },
      'auth service answered 200 with a body that is not a JSON object',
    );
    return gatewayRefusal('GW_AUTH_UNAVAILABLE', 'auth service answered 200 with a body that is not a JSON object');
  }
  const skipped: SkippedClaim[] = [];
  const out = claimHeaders(claims, skipped, clientSubjectHeader);
  if (skipped.length > 0) logger.warn({ reqId: requestId, skipped }, 'auth: claims skipped, not valid as headers');
  return { ok: true, claimHeaders: out, claims };
}

/** Headers never relayed from the auth service: hop-by-hop, framing, and the gateway's request id. */
const NOT_RELAYED = new Set([...HOP_BY_HOP, 'content-length', 'x-request-id']);

/** The auth service's end-to-end headers, with a content-length for the buffered body. */
function relayedHeaders(
  headers: IncomingHttpHeaders,
  length: number,
  requestId: string,
  logger: Logger,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || NOT_RELAYED.has(name)) continue;
    if (typeof value === 'string') out[name] = value;
    else if (name === 'set-cookie') {
      // The AUTH CONTRACT carries one value per header; cookies cannot be joined with commas.
      out[name] = value[0]!;
      if (value.length > 1)
        logger.warn(
          { reqId: requestId, dropped: value.length - 1 },
          'auth service set several cookies on a refusal; only the first is relayed',
        );
    } else out[name] = value.join(', ');
  }
  out['content-length'] = String(length);
  return out;
}
