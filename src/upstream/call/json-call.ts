/**
 * One GET whose answer the gateway reads as JSON: a mapping call (mapping/fetch-calls.ts) or a backend
 * of an aggregated route (endpoints/aggregate.ts). It goes through the origin's keep-alive pool (a bounded
 * number of connections per host), within its timeout, under the origin's circuit.
 * It never throws: every failure becomes an outcome with a reason for the warning log.
 *
 * The timeout (`timeouts.mappingSec` for mapping calls) runs from the moment the call has a connection, never while it waits in the
 * gateway's own pool queue: undici's `headersTimeout` starts when the request is written, and the
 * body then gets `mappingSec` of its own. Waiting for a free connection is the gateway's doing,
 * not the backend's, so it can neither time a call out nor count as a circuit failure
 * (docs/design-decisions.md "Circuit breaker": a failure is a 5xx or no answer from the backend).
 *
 * A mapping call sends no client credentials (its answer is cached for every client): only the
 * request id and, with `telemetry.propagation` on, a `traceparent` with the request's trace id and
 * a span id of its own (plus `tracestate`). An aggregated route's call sends the headers a plain
 * route's backend would get (`headers`). Each answer is reported as 'upstream:response' (call
 * 'mapping' or 'backend') for the metrics.
 */
import type { IncomingMessage } from 'node:http';
import type { BackendPool, JsonOutcome, Upstream } from '../types.js';
import type { EventBus, UpstreamCall } from '../../observability/events.js';
import { appendTraceHeaders } from '../../observability/trace-context.js';
import type { Dispatcher } from 'undici';
import { classifyUpstreamError } from '../upstream-error.js';
import type { CircuitPermit } from '../../circuit/types.js';
import { readCall, type ReadReport } from './request.js';
import { callOutcome } from './pool-count.js';
import { callStarted, reportRetry, retryableFailure, retryableStatus } from './pool-use.js';
import { decodeBody, isJsonContentType, readLimited, utf8Text } from './read-body.js';

export interface JsonCallOptions {
  readonly requestId: string;
  /** Budget for the answer's headers once the call has a connection, and again for its body. */
  readonly timeoutMs: number;
  /** Largest answer accepted. */
  readonly maxBytes: number;
  /** Aborted when nobody needs the answer any more (the client left); absent for shared calls. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The client request whose trace the call continues (a child span id is drawn only when the
   * call is really made); undefined when `telemetry.propagation` is off.
   */
  readonly traceOf?: IncomingMessage | undefined;
  /** Where an answered call is reported ('upstream:response'); made per route at config load. */
  readonly observer?: JsonCallObserver | undefined;
  /**
   * The flat request header list, `host` first; default: the mapping call's (host, JSON accept,
   * identity encoding, request id, trace). It must ask for `accept-encoding: identity`.
   */
  readonly headers?: string[] | undefined;
  /**
   * Attempts after a failure another target may not have, on a named upstream with a retry budget
   * (the route's `retries`); 0 or absent: none.
   */
  readonly retries?: number | undefined;
  /** The caller reads the text with a strict JSON scanner itself (a batch answer): no JSON.parse here. */
  readonly validated?: boolean | undefined;
}

/** The route a call is made for, the bus its answers are reported on, and the kind of call. */
export interface JsonCallObserver {
  readonly events: EventBus;
  readonly routeId: string;
  /** Default 'mapping'. */
  readonly call?: UpstreamCall;
}

const CIRCUIT_OPEN: JsonOutcome = Object.freeze({ ok: false, reason: 'circuit open' });
const ABORTED: JsonOutcome = Object.freeze({ ok: false, reason: 'aborted' });
const NOT_SENT: JsonOutcome = Object.freeze({ ok: false, reason: 'not sent (connection pool closed)' });

/** undici errors of a request that never left the gateway (its pool was closed or destroyed). */
const NEVER_SENT_CODES: ReadonlySet<string> = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED']);

/** Fetches `path` from the upstream and returns its JSON text, or why there is none. */
export async function callJson(upstream: Upstream, path: string, options: JsonCallOptions): Promise<JsonOutcome> {
  upstream.retryBudget?.call();
  let avoid: BackendPool | undefined;
  for (let attempt = 0; ; attempt++) {
    const mayRetry = attempt < (options.retries ?? 0) && upstream.retryBudget !== undefined;
    const result = await attemptJson(upstream, path, options, avoid, mayRetry);
    if (!('retryFrom' in result)) return result;
    avoid = result.retryFrom;
    const observer = options.observer;
    if (observer !== undefined)
      reportRetry(
        observer.events,
        { requestId: options.requestId, routeId: observer.routeId, upstream },
        avoid,
        result.reason,
      );
  }
}

/** What a failed attempt that goes again says: the pool to avoid, and why. */
type Retry = { readonly retryFrom: BackendPool; readonly reason: string };

/**
 * One attempt of a JSON call. With `mayRetry`, a failure another target may not have (no
 * connection, a reset before any answer, a 502 or 503) takes a retry from the upstream's budget
 * and is returned as a Retry: its circuit permit is released, not failed, as the circuit sees only
 * the call's final outcome; the target's health still counts it.
 */
async function attemptJson(
  upstream: Upstream,
  path: string,
  options: JsonCallOptions,
  avoid: BackendPool | undefined,
  mayRetry: boolean,
): Promise<JsonOutcome | Retry> {
  // The caller left while this call waited its turn (mapping/limit.ts): no permit, no call.
  if (options.signal?.aborted === true) return ABORTED;
  // While its circuit is open a mapping rule is skipped without a call.
  const permit = upstream.breaker.acquire();
  if (permit === undefined) return CIRCUIT_OPEN;
  const settle = once(permit);
  const abort = new AbortController();
  let timedOut = false;
  let bodyTimer: NodeJS.Timeout | undefined;
  const onCallerAbort = () => abort.abort();
  options.signal?.addEventListener('abort', onCallerAbort, { once: true });

  // A flat list: the form undici takes without copying, and the one the OTLP exporter reads.
  const requestHeaders = options.headers ?? mappingHeaders(upstream, options);
  // Counted on its pool like the route's own calls: they share its connections.
  const pool = callStarted(upstream, false, avoid);
  // `host` comes first: the target's, for a named upstream.
  requestHeaders[1] = pool.origin.hostHeader;
  const request = { path, headers: requestHeaders, signal: abort.signal, headersTimeoutMs: options.timeoutMs };
  try {
    return await readCall<JsonOutcome | Retry>(
      { pool },
      { ...request, bodyTimeoutMs: options.timeoutMs },
      reportOf(upstream, options),
      (answer) => {
        // bodyTimeout only bounds the silence between chunks; a trickle must not hold the response.
        bodyTimer = setTimeout(() => {
          timedOut = true;
          abort.abort();
        }, options.timeoutMs);
        const { statusCode, body } = answer;
        if (retryableStatus(statusCode) && mayRetry && upstream.retryBudget?.tryRetry() === true) {
          body.dump().catch(() => undefined);
          settle('release');
          callOutcome(pool, true);
          return { retryFrom: pool, reason: `status ${statusCode}` };
        }
        // A 5xx is a failure, any other answer a success.
        settle(statusCode >= 500 ? 'fail' : 'succeed');
        callOutcome(pool, statusCode >= 500);
        return readJson(answer, options);
      },
    );
  } catch (err) {
    // Only the body timer sets this: the answer's headers were already counted on the circuit.
    if (timedOut) return { ok: false, reason: 'timeout' };
    return failedAttempt(err, { upstream, pool, options, mayRetry, settle });
  } finally {
    clearTimeout(bodyTimer);
    options.signal?.removeEventListener('abort', onCallerAbort);
  }
}

type Settle = (outcome: 'succeed' | 'fail' | 'release') => void;

/** The circuit permit, settled once whatever path the call takes. */
function once(permit: CircuitPermit): Settle {
  let settled = false;
  return (outcome) => {
    if (settled) return;
    settled = true;
    permit[outcome]();
  };
}

/** Where an answered call is reported: nowhere without an observer. */
function reportOf(upstream: Upstream, options: JsonCallOptions): ReadReport | undefined {
  const observer = options.observer;
  if (observer === undefined) return undefined;
  return {
    events: observer.events,
    routeId: observer.routeId,
    origin: upstream.origin.key,
    call: observer.call ?? 'mapping',
  };
}

/** A call that got an answer it can use: a 2xx JSON body within the size limit. */
async function readJson(
  { statusCode, headers, body }: Dispatcher.ResponseData,
  options: JsonCallOptions,
): Promise<JsonOutcome> {
  if (statusCode < 200 || statusCode >= 300) {
    body.dump().catch(() => undefined);
    return { ok: false, reason: `status ${statusCode}` };
  }
  if (!isJsonContentType(headers['content-type'])) {
    body.dump().catch(() => undefined);
    return { ok: false, reason: `non-JSON content-type ${String(headers['content-type'])}` };
  }
  const read = await readLimited(body, options.maxBytes);
  if (read.overflow) {
    body.destroy();
    return { ok: false, reason: `body larger than ${options.maxBytes} bytes` };
  }
  const decoded = await decodeBody(
    Buffer.concat(read.chunks, read.size),
    headers['content-encoding'],
    options.maxBytes,
  );
  const text = decoded === undefined ? undefined : utf8Text(decoded);
  if (text === undefined) return { ok: false, reason: 'undecodable body' };
  const json = text.trim();
  if (options.validated !== true && !isValidJson(json)) return { ok: false, reason: 'non-JSON body' };
  return { ok: true, json };
}

/** A call that failed before an answer it could use: released, retried elsewhere, or failed. */
function failedAttempt(
  err: unknown,
  at: { upstream: Upstream; pool: BackendPool; options: JsonCallOptions; mayRetry: boolean; settle: Settle },
): JsonOutcome | Retry {
  const { upstream, pool, settle } = at;
  if (at.options.signal?.aborted === true) {
    // The client left: nobody waits for this answer, and the backend is not to blame.
    settle('release');
    return ABORTED;
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && NEVER_SENT_CODES.has(code)) {
    // The gateway closed its own pool (shutdown): the backend never saw the call.
    settle('release');
    return NOT_SENT;
  }
  callOutcome(pool, true);
  const retryable = retryableFailure(err);
  if (retryable !== undefined && at.mayRetry && upstream.retryBudget?.tryRetry() === true) {
    settle('release');
    return { retryFrom: pool, reason: retryable };
  }
  settle('fail');
  const kind = classifyUpstreamError(err).kind;
  return { ok: false, reason: kind === 'other' ? `error ${typeof code === 'string' ? code : String(err)}` : kind };
}

/** No client credentials (the cache is shared between clients): the request id and the trace. */
function mappingHeaders(upstream: Upstream, options: JsonCallOptions): string[] {
  const headers = [
    'host',
    upstream.origin.hostHeader,
    'accept',
    'application/json',
    'accept-encoding',
    'identity',
    'x-request-id',
    options.requestId,
  ];
  if (options.traceOf !== undefined) appendTraceHeaders(options.traceOf, headers);
  return headers;
}

/** Validation only: the text itself is what gets inserted, so nothing is lost in a round trip. */
function isValidJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
