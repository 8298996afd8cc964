/**
 * One GET whose answer the gateway reads as JSON: a mapping call (mapping/fetch-calls.ts) or a backend
 * of an aggregated route (endpoints/aggregate.ts). A thin handler on the outbound-call core
 * (./outbound-call.ts), which picks the pool, keeps the deadlines and decides the retries, as it
 * does for a route's streamed calls; this handler holds the call's circuit permit and reads the answer.
 * It never throws: every failure becomes an outcome with a reason for the warning log.
 *
 * The timeout (`timeouts.mappingSec` for mapping calls) runs from the moment the call's first
 * attempt has a connection, never while it waits in the gateway's own pool queue, and the body
 * then gets as long again, in all. Waiting for a free connection is the gateway's doing, not the
 * backend's, so it can neither time a call out nor count as a circuit failure
 * (docs/design-decisions.md "Circuit breaker": a failure is a 5xx or no answer from the backend).
 * An attempt that goes again on another target is held to the same deadline, under the same permit.
 *
 * A mapping call sends no client credentials (its answer is cached for every client): only the
 * request id and, with `telemetry.propagation` on, a `traceparent` with the request's trace id and
 * a span id of its own (plus `tracestate`). An aggregated route's call sends the headers a plain
 * route's backend would get (`headers`). Each answer is reported as 'upstream:response' (call
 * 'mapping' or 'backend') for the metrics.
 */
import type { IncomingMessage } from 'node:http';
import type { Dispatcher } from 'undici';
import type { BackendPool, JsonOutcome, Upstream } from '../types.js';
import type { EventBus, UpstreamCall } from '../../observability/events.js';
import type { CircuitPermit } from '../../circuit/types.js';
import { settlePermit } from '../../circuit/settle.js';
import { appendTraceHeaders } from '../../observability/trace-context.js';
import { classifyUpstreamError } from '../upstream-error.js';
import { OutboundCall, type CallPlan } from './outbound-call.js';
import type { CallerSignal } from './caller-signal.js';
import { callDeadlines } from './deadlines.js';
import { ClientGone } from './failure.js';
import { reportAnswer, type ReadReport } from './request.js';
import { reportRetry } from './pool-use.js';
import { callOutcome } from './pool-count.js';
import { decodeBody, isJsonContentType, rawHeaderValue, utf8Text } from './read-body.js';

export interface JsonCallOptions {
  readonly requestId: string;
  /** Budget for the answer's headers once the call has a connection, and again for its whole body. */
  readonly timeoutMs: number;
  /** Largest answer accepted. */
  readonly maxBytes: number;
  /** Aborted when nobody needs the answer any more (the client left); absent for shared calls. */
  readonly signal?: CallerSignal | undefined;
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
const TIMEOUT: JsonOutcome = Object.freeze({ ok: false, reason: 'timeout' });

/** undici errors of a request that never left the gateway (its pool was closed or destroyed). */
const NEVER_SENT_CODES: ReadonlySet<string> = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED']);

/** How much of an answer that is not used is read to keep its connection, as undici's `dump()` does. */
const DISCARD_LIMIT = 128 * 1024;

/** The answer's body is not wanted (too large, or not used and long): the connection goes with it. */
class Dropped extends Error {
  readonly code = 'UND_ERR_ABORTED';
}

/** Fetches `path` from the upstream and returns its JSON text, or why there is none. */
export function callJson(upstream: Upstream, path: string, options: JsonCallOptions): Promise<JsonOutcome> {
  // The caller left while this call waited its turn (mapping/limit.ts): no permit, no call.
  if (options.signal?.aborted === true) return Promise.resolve(ABORTED);
  // While its circuit is open a mapping rule is skipped without a call.
  const permit = upstream.breaker.acquire();
  if (permit === undefined) return Promise.resolve(CIRCUIT_OPEN);
  const plan: CallPlan = {
    upstream,
    streaming: false,
    headersTimeoutMs: options.timeoutMs,
    bodyTimeoutMs: options.timeoutMs,
    retries: options.retries ?? 0,
    deadlines: callDeadlines,
  };
  return new Promise((resolve) => new JsonCall(plan, path, options, permit, resolve).start());
}

/** One JSON call: the answer's body read whole (bounded), decoded and checked. */
class JsonCall extends OutboundCall {
  /** A flat list: the form undici takes without copying, and the one the OTLP exporter reads. */
  private readonly headers: string[];
  private readonly report: ReadReport | undefined;
  /** Unset once the call has its outcome (the body may still be read to keep the connection). */
  private resolve: ((outcome: JsonOutcome) => void) | undefined;
  /** Unset once settled. */
  private permit: CircuitPermit | undefined;
  /** The body so far while it is kept; undefined while an unused one is discarded. */
  private chunks: Buffer[] | undefined;
  private size = 0;
  private encoding: string | string[] | undefined;
  private readonly onCallerAbort = (): void => this.abort(new ClientGone());

  constructor(
    plan: CallPlan,
    private readonly path: string,
    private readonly options: JsonCallOptions,
    permit: CircuitPermit,
    resolve: (outcome: JsonOutcome) => void,
  ) {
    super(plan);
    this.permit = permit;
    this.resolve = resolve;
    this.headers = options.headers ?? mappingHeaders(plan.upstream, options);
    this.report = reportOf(plan.upstream, options.observer);
  }

  protected override get headDueFromConnection(): boolean {
    return true;
  }

  start(): void {
    this.options.signal?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.begin();
  }

  protected requestOn(pool: BackendPool): Dispatcher.DispatchOptions {
    // `host` comes first: the target's, for a named upstream.
    this.headers[1] = pool.origin.hostHeader;
    return { path: this.path, method: 'GET', headers: this.headers, headersTimeout: 0, bodyTimeout: 0 };
  }

  protected stillWanted(): boolean {
    return this.resolve !== undefined && this.options.signal?.aborted !== true;
  }

  protected reportHead(status: number): void {
    if (this.report !== undefined) reportAnswer(this.report, status, this.started);
  }

  protected reportRetry(failed: BackendPool, reason: string): void {
    const observer = this.options.observer;
    if (observer === undefined) return;
    const at = { requestId: this.options.requestId, routeId: observer.routeId, upstream: this.call.upstream };
    reportRetry(observer.events, at, failed, reason);
  }

  protected onAnswer(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.settle({ upstreamStatus: statusCode });
    if (statusCode < 200 || statusCode >= 300) return this.discard(`status ${statusCode}`);
    const type = rawHeaderValue(rawHeaders, 'content-type');
    if (!isJsonContentType(type)) return this.discard(`non-JSON content-type ${String(type)}`);
    this.encoding = rawHeaderValue(rawHeaders, 'content-encoding');
    this.chunks = [];
    return true;
  }

  protected onBody(chunk: Buffer): boolean {
    this.size += chunk.length;
    const chunks = this.chunks;
    if (chunks === undefined) {
      if (this.size > DISCARD_LIMIT) this.abort(new Dropped('unused answer too long'));
    } else if (this.size > this.options.maxBytes) {
      this.chunks = undefined;
      this.done({ ok: false, reason: `body larger than ${this.options.maxBytes} bytes` });
      this.abort(new Dropped('answer too large'));
    } else {
      chunks.push(chunk);
    }
    return true;
  }

  onComplete(): void {
    this.finish();
    const chunks = this.chunks;
    if (chunks === undefined) return;
    this.chunks = undefined;
    void this.parse(Buffer.concat(chunks, this.size)).then((outcome) => this.done(outcome));
  }

  private async parse(body: Buffer): Promise<JsonOutcome> {
    const maxBytes = this.options.maxBytes;
    const decoded = await decodeBody(body, this.encoding, maxBytes);
    const text = decoded === undefined ? undefined : utf8Text(decoded);
    if (text === undefined) return { ok: false, reason: 'undecodable body' };
    const json = text.trim();
    if (this.options.validated !== true && !isValidJson(json)) return { ok: false, reason: 'non-JSON body' };
    return { ok: true, json };
  }

  /** The gateway's own wait ran out (a retry found no free connection): not the backend's failure. */
  protected onQueueOverdue(): void {
    this.settle({});
    this.done(TIMEOUT);
  }

  protected onFailure(err: Error): void {
    this.finish();
    if (this.resolve === undefined) return;
    if (this.options.signal?.aborted === true) {
      // The client left: nobody waits for this answer, and the backend is not to blame.
      this.settle({ upstreamFailure: 'aborted' });
      return this.done(ABORTED);
    }
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && NEVER_SENT_CODES.has(code)) {
      // The gateway closed its own pool (shutdown): the backend never saw the call.
      this.settle({});
      return this.done(NOT_SENT);
    }
    const kind = classifyUpstreamError(err).kind;
    // Only a call that got no answer blames its target (a named upstream's passive health).
    if (!this.headArrived && this.pool !== undefined) callOutcome(this.pool, true);
    this.settle({ upstreamFailure: kind });
    const reason = kind === 'other' ? `error ${typeof code === 'string' ? code : String(err)}` : kind;
    this.done({ ok: false, reason });
  }

  protected override finish(): void {
    if (this.finished) return;
    super.finish();
    this.options.signal?.removeEventListener('abort', this.onCallerAbort);
  }

  /** An answer that is not used: its outcome now, its body read to keep the connection. */
  private discard(reason: string): boolean {
    this.done({ ok: false, reason });
    return true;
  }

  /** Settles the circuit permit once, by the call's outcome (circuit/settle.ts). */
  private settle(result: Parameters<typeof settlePermit>[1]): void {
    const permit = this.permit;
    if (permit === undefined) return;
    this.permit = undefined;
    // The origin's failureStatuses decide which answers count (config.circuitBreaker).
    settlePermit(permit, result, this.call.upstream.breaker.failureStatuses);
  }

  /** The caller's outcome, once. */
  private done(outcome: JsonOutcome): void {
    const resolve = this.resolve;
    this.resolve = undefined;
    resolve?.(outcome);
  }
}

/** Where an answered call is reported: nowhere without an observer. */
function reportOf(upstream: Upstream, observer: JsonCallObserver | undefined): ReadReport | undefined {
  if (observer === undefined) return undefined;
  const { events, routeId } = observer;
  return { events, routeId, origin: upstream.origin.key, call: observer.call ?? 'mapping' };
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
