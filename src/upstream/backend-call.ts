/**
 * The gateway's call to a route's backend, for every endpoint that makes one (standard routes,
 * SSE streams, the primary call of a mapped route). It owns what those calls share: the backend
 * path and query, the request headers and body, the pool the call goes out on and its in-flight
 * count, the 'upstream:response' report, one failure path and one reaction to a client that
 * leaves. Endpoints differ only in what they do with the answer: a subclass of `BackendCall`
 * decides in `onResponse`, and may take over `onData` and `onComplete`.
 *
 * A call is an undici dispatch handler (onConnect, onHeaders, onData, onComplete, onError), the
 * raw protocol undici's own `stream()` and `request()` use, typed deprecated in favour of the
 * controller API. `Pool.stream()` would add a per-request AbortController, AsyncResource and
 * `finished()` listeners, and the controller API wraps every handler in two more objects and
 * parses the head into an object the gateway then copies again: the raw header list is built
 * straight into the object `writeHead` takes instead (docs/performance.md).
 *
 * Lifecycle of one call, and what ends it:
 *   start        pick the pool, count the call, dispatch; the head's deadline starts
 *   onConnect    a connection: a call given up meanwhile (client gone, deadline) aborts now
 *   onHeaders    1xx skipped; otherwise parse, record the status, report, `onResponse`;
 *                the body's idle deadline starts
 *   onData       `onBody`: written to the client with backpressure (undici pauses until 'drain')
 *   onComplete   the client response ends                               -> finished, settled
 *   onError      one failure path: answer 502/504, or cut a started answer -> finished, settled
 * "Finished" is the backend call's end (the count drops); "settled" is the pipeline's resolve.
 * They can come apart: a 504 at the deadline of a call still queued for a connection settles
 * before the call is dropped, a mapped answer finishes its backend call before it is enriched and
 * settled.
 *
 * Deadlines are the gateway's, not undici's (upstream/call-deadlines.ts says why): the head is due
 * `headersTimeoutMs` after the call started, or after the request body was sent when it streams;
 * then no more than `bodyTimeoutMs` may pass between two body chunks. Like undici's own timers, a
 * deadline does not run out on the client: not while the client is still sending the body, nor
 * while the answer waits for the client to take what was written.
 */
import type { Readable } from 'node:stream';
import { errors, type Dispatcher } from 'undici';
import type { Exchange } from '../pipeline/types.js';
import type { CompiledRoute } from '../config/types.js';
import type { EventBus, UpstreamCall } from '../observability/events.js';
import type { ErrorCode } from '../response/errors.js';
import { sendError } from '../response/send-error.js';
import { announcesBody, bufferedLength, upstreamBody } from '../guards/request-buffer.js';
import type { BackendPool, Upstream } from './upstream.js';
import { appendQuery } from './target-url.js';
import {
  alsoDropping,
  downstreamHeadersFromRaw,
  upstreamRequestHeaders,
  type RequestDropSet,
} from './forward-headers.js';
import { classifyUpstreamError, type UpstreamFailureKind } from './upstream-error.js';
import { editHeaderList, editHeaderRecord } from './header-edits.js';
import { answerCompleted } from '../response/answer-completed.js';
import { callDeadlines, type DeadlineSweep, type Watched } from './call-deadlines.js';

export interface BackendCallOptions {
  readonly upstream: Upstream;
  /** Client headers never forwarded (the pipeline's set). */
  readonly dropHeaders: RequestDropSet;
  /** No response head within this time: 504. A call waiting for a pooled connection counts from its start. */
  readonly headersTimeoutMs: number;
  /** Longest silence between two body chunks; 0 for none (streams). */
  readonly bodyTimeoutMs: number;
  readonly events: EventBus;
  /**
   * Ask for the body as the backend stores it (`Accept-Encoding: identity` instead of the
   * client's): a compressing backend holds stream events back, and enrichment parses the body.
   */
  readonly identityEncoding?: boolean;
  /** Long-lived answers (SSE): the call goes out on the upstream's stream pool. */
  readonly streaming?: boolean;
  /** What watches the calls' deadlines (default: the process's `callDeadlines`). */
  readonly deadlines?: DeadlineSweep;
}

/** What every call of one route shares, fixed at config load. */
export interface RouteCall {
  readonly route: CompiledRoute;
  readonly upstream: Upstream;
  readonly dropHeaders: RequestDropSet;
  readonly identityEncoding: boolean;
  readonly streaming: boolean;
  readonly method: Dispatcher.HttpMethod;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly deadlines: DeadlineSweep;
  readonly events: EventBus;
}

/** Fixes the calls of one route (once, at config load). */
export function createRouteCall(route: CompiledRoute, options: BackendCallOptions): RouteCall {
  const identityEncoding = options.identityEncoding === true;
  return {
    route,
    upstream: options.upstream,
    dropHeaders: identityEncoding ? dropAcceptEncoding(options.dropHeaders) : options.dropHeaders,
    identityEncoding,
    streaming: options.streaming === true,
    method: route.method as Dispatcher.HttpMethod,
    headersTimeoutMs: options.headersTimeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs,
    deadlines: options.deadlines ?? callDeadlines,
    events: options.events,
  };
}

/** The drop set plus `Accept-Encoding`, which a call asking for `identity` replaces; the trust in the peer stays. */
export function dropAcceptEncoding(drop: RequestDropSet): RequestDropSet {
  return alsoDropping(drop, ['accept-encoding']);
}

/** The backend path and query of a call: the route's path with the parameters, then the client's query. */
export function backendPath(route: CompiledRoute, ex: Pick<Exchange, 'params' | 'rawQuery'>): string {
  return appendQuery(route.buildPath(ex.params), route.path, ex.rawQuery);
}

/**
 * The flat header list of a call: the client's end-to-end headers less the drop set, the claim
 * headers, the forwarding headers and the request id (upstream/forward-headers.ts), then the
 * route's request header rules (upstream/header-edits.ts). `Host` is the target's (the picked
 * pool's origin, for a named upstream). An upgrade
 * passes its own exchange and adds its `Connection: Upgrade`.
 */
export function backendHeaders(
  call: Pick<RouteCall, 'route' | 'upstream' | 'dropHeaders' | 'identityEncoding'>,
  ex: Pick<Exchange, 'req' | 'requestId' | 'claimHeaders' | 'claims' | 'params' | 'body'>,
  hostHeader = call.upstream.origin.hostHeader,
): string[] {
  let headers = upstreamRequestHeaders(
    {
      req: ex.req,
      requestId: ex.requestId,
      hostHeader,
      claimHeaders: ex.claimHeaders,
      bodyLength: bufferedLength(ex),
    },
    call.dropHeaders,
  );
  const edit = call.route.editHeaders.request;
  if (edit !== undefined) headers = editHeaderList(edit, headers, ex);
  if (call.identityEncoding) headers.push('accept-encoding', 'identity');
  return headers;
}

/**
 * Takes the pool one call goes out on and counts the call on it: every call on an upstream's
 * pools, whatever made it, so that a full pool is seen as full. End it with `callEnded`.
 */
export function callStarted(upstream: Upstream, streaming = false, avoid?: BackendPool): BackendPool {
  const pool = streaming ? upstream.pickForStream(avoid) : upstream.pick(avoid);
  pool.inFlight++;
  return pool;
}

/** The one place a call's end is recorded on its pool, once per `callStarted`. */
export function callEnded(pool: BackendPool): void {
  pool.inFlight--;
}

/**
 * Records on a named upstream's target whether the call failed (no answer, or a 5xx): its passive
 * health (upstream/targets.ts). Nothing to do for a plain service's pool.
 */
export function callOutcome(pool: BackendPool, failed: boolean): void {
  pool.health?.record(failed);
}

/** An answer that says this target cannot serve the call now: another target may. */
export function retryableStatus(status: number): boolean {
  return status === 502 || status === 503;
}

/** A failure before any answer that another target may not have: its kind, else undefined. */
export function retryableFailure(err: unknown): UpstreamFailureKind | undefined {
  const kind = classifyUpstreamError(err).kind;
  return kind === 'refused' || kind === 'reset' || kind === 'dns' ? kind : undefined;
}

/** Reports that a call of `routeId` goes again, away from the target `failed` ('upstream:retry'). */
export function reportRetry(
  events: EventBus,
  at: { readonly requestId: string; readonly routeId: string; readonly upstream: Upstream },
  failed: BackendPool,
  reason: string,
): void {
  events.emit('upstream:retry', {
    requestId: at.requestId,
    routeId: at.routeId,
    origin: at.upstream.origin.key,
    target: failed.origin.key,
    reason,
  });
}

/**
 * Reports a call's response head ('upstream:response'): the backend's latency as the gateway saw
 * it, from `started` (a `performance.now()` reading taken when the call went out).
 */
export function reportResponse(
  call: Pick<RouteCall, 'route' | 'upstream' | 'events'>,
  kind: UpstreamCall,
  status: number,
  started: number,
): void {
  call.events.emit('upstream:response', {
    routeId: call.route.id,
    origin: call.upstream.origin.key,
    call: kind,
    status,
    durationMs: performance.now() - started,
  });
}

/** What a call's outcome is recorded on: an HTTP exchange, or an upgrade's counterpart. */
export type CallRecord = Pick<Exchange, 'requestId' | 'upstreamStatus' | 'upstreamFailure' | 'errorCode'> & {
  readonly route: { readonly id: string };
};

/**
 * Records a call that ended in an error and reports it; returns the gateway error to answer, or
 * undefined when there is nobody to answer.
 *
 * A client that left first is its own outcome, not the backend's: the call was cut because nobody
 * waits for it, so it is reported as 'client:closed' (never 'upstream:error') and the circuit
 * counts nothing. `clientLeft` says so when the caller knows it (it cancelled the call for the
 * departure); otherwise an abort after the client's side closed means the same.
 */
export function recordFailure(
  rec: CallRecord,
  err: unknown,
  origin: string,
  events: EventBus,
  clientLeft: boolean,
  clientGone: boolean,
): ErrorCode | undefined {
  const failure = classifyUpstreamError(err);
  if (clientLeft || (failure.kind === 'aborted' && clientGone)) {
    if (rec.upstreamStatus === undefined) rec.upstreamFailure = 'aborted';
    events.emit('client:closed', { requestId: rec.requestId, routeId: rec.route.id, origin });
    return undefined;
  }
  if (rec.upstreamStatus === undefined) rec.upstreamFailure = clientGone ? 'aborted' : failure.kind;
  events.emit('upstream:error', {
    requestId: rec.requestId,
    routeId: rec.route.id,
    origin,
    kind: failure.kind,
    error: err,
  });
  return clientGone ? undefined : failure.code;
}

/**
 * The failure path of an HTTP call: recorded and reported (`recordFailure`), then answered 502/504
 * JSON, or the response cut short when its head already went out.
 */
export function sendUpstreamFailure(
  ex: Exchange,
  err: unknown,
  origin: string,
  events: EventBus,
  clientLeft: boolean,
): void {
  const { res } = ex;
  const code = recordFailure(ex, err, origin, events, clientLeft, res.destroyed);
  if (code !== undefined && !res.headersSent) {
    ex.errorCode = code;
    sendError(res, code);
  } else if (!res.destroyed) {
    res.destroy();
  }
}

/** Why a call was given up because its client left (applied at dispatch when not connected yet). */
class ClientGone extends Error {
  readonly code = 'UND_ERR_ABORTED';
  constructor() {
    super('client closed the connection');
  }
}

/** The attempt was given up to be sent again, to another target. */
class RetryAttempt extends Error {
  readonly code = 'UND_ERR_ABORTED';
  constructor() {
    super('answer dropped: the call goes to another target');
  }
}

/** The queue deadline passed: classified as a timeout, like undici's own headers timeout. */
class QueueTimeout extends Error {
  readonly code = 'ETIMEDOUT';
  constructor() {
    super('no connection and no response headers within backendSec');
  }
}

/**
 * One call to the backend of one request; `start()` sends it, the pipeline's `resolve` runs once
 * the client has its answer. Subclasses say what an answer becomes (`onResponse`).
 */
export abstract class BackendCall implements Dispatcher.DispatchHandler, Watched {
  /** undici's abort for this call, from onConnect. */
  private abortCall: ((err?: Error) => void) | undefined;
  /** Resumes the backend connection's parser after onData returned false. */
  private resumeCall: (() => void) | undefined;
  /** Set when the call must end before it got a connection: applied in onConnect. */
  private giveUp: Error | undefined;
  /** When the head, or the next body chunk, is due (on the clock of `call.deadlines`, which watches it). */
  deadlineAt = Number.POSITIVE_INFINITY;
  sweepPrev: Watched | undefined;
  sweepNext: Watched | undefined;
  sweepBy: DeadlineSweep | undefined;
  /** The request body while it streams to the backend and is not all sent yet. */
  private upload: Readable | undefined;
  /** The answer waits for the client to take what was written ('drain'). */
  private waitingForClient = false;
  private pool: BackendPool | undefined;
  /** Attempts made again after a failed one (retries on a named upstream). */
  private retried = 0;
  /** The attempt being given up for a retry, with the time the next one has. */
  private retrying: string | undefined;
  private settled = false;
  private finished = false;
  /** The client left before its answer ended: the call's end is the client's outcome. */
  private clientLeft = false;
  protected readonly started = performance.now();
  private readonly onDrain = () => {
    this.waitingForClient = false;
    this.nextChunkDue();
    this.resumeCall?.();
  };
  /**
   * The exchange and the pipeline's resolve, dropped once the call is finished and settled:
   * undici keeps a finished handler reachable for a while, and the request's whole object graph
   * with it, long enough to be promoted to the old generation (docs/performance.md). Callbacks
   * that come later find them gone and do nothing.
   */
  protected ex: Exchange | undefined;
  private resolve: (() => void) | undefined;

  constructor(
    ex: Exchange,
    protected readonly call: RouteCall,
    resolve: () => void,
  ) {
    this.ex = ex;
    this.resolve = resolve;
  }

  /** What the answer's head becomes (written, buffered...); false pauses the backend connection. */
  protected abstract onResponse(ex: Exchange, statusCode: number, headers: Record<string, string | string[]>): boolean;

  /** Counts the call on its pool and dispatches it. */
  start(): void {
    const ex = this.ex!;
    // A client that leaves must release the backend connection at once, so it can serve the next request.
    ex.onClose = this.onClientClose;
    this.call.upstream.retryBudget?.call();
    this.watchFor(this.call.headersTimeoutMs);
    this.dispatchAttempt(ex, undefined);
  }

  /** Sends one attempt of the call on a pool (another than `avoid` when there is one). */
  private dispatchAttempt(ex: Exchange, avoid: BackendPool | undefined): void {
    const call = this.call;
    const pool = callStarted(call.upstream, call.streaming, avoid);
    this.pool = pool;
    const body = upstreamBody(ex);
    this.upload = body === null || Buffer.isBuffer(body) ? undefined : body;
    pool.dispatcher.dispatch(
      {
        path: backendPath(call.route, ex),
        method: ex.req.method === 'HEAD' ? 'HEAD' : call.method,
        headers: backendHeaders(call, ex, pool.origin.hostHeader),
        body,
        // 0: no timer of undici's; the deadlines are this call's (see the header comment).
        headersTimeout: 0,
        bodyTimeout: 0,
      },
      this,
    );
  }

  /**
   * Whether this failed attempt goes again, on another target: a named upstream with a retry
   * left for the route and in its budget, a body that can be sent again, time left before the
   * route's deadline, and a client still waiting. Takes the retry from the budget when it does.
   */
  private mayRetry(ex: Exchange): boolean {
    const call = this.call;
    if (this.retried >= call.route.retries || this.settled || this.clientLeft || this.giveUp !== undefined)
      return false;
    if (ex.body === undefined && announcesBody(ex.req)) return false;
    if (this.deadlineAt - call.deadlines.now() < 1) return false;
    return call.upstream.retryBudget?.tryRetry() === true;
  }

  /** Ends a failed attempt and sends the next one (the deadline keeps running). */
  private retry(ex: Exchange, reason: string): void {
    const failed = this.pool!;
    callOutcome(failed, true);
    callEnded(failed);
    this.pool = undefined;
    this.abortCall = undefined;
    this.resumeCall = undefined;
    this.retried++;
    const { events, route, upstream } = this.call;
    reportRetry(events, { requestId: ex.requestId, routeId: route.id, upstream }, failed, reason);
    this.dispatchAttempt(ex, failed);
  }

  /** The exchange's `onClose`: the client response closed, finished or not. */
  readonly onClientClose = (): void => this.clientClosed();

  /** The client left (its response closed before it finished): release the backend connection. */
  protected clientClosed(): void {
    if (this.ex === undefined || answerCompleted(this.ex.res)) return;
    this.clientLeft = true;
    this.abort(new ClientGone());
  }

  /** Ends the call; before it has a connection, at dispatch. Nothing once it finished. */
  abort(reason: Error): void {
    if (this.finished) return;
    if (this.abortCall !== undefined) this.abortCall(reason);
    else this.giveUp ??= reason;
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortCall = abort;
    if (this.giveUp !== undefined) abort(this.giveUp);
  }

  /** Returns false to pause the backend connection's parser. */
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // 1xx (103 Early Hints...) are the backend's to the gateway, not forwarded.
    if (statusCode < 200) return true;
    const { ex, call } = this;
    if (ex === undefined || this.settled) {
      this.abort(new ClientGone());
      return false;
    }
    let headers: Record<string, string | string[]>;
    try {
      headers = downstreamHeadersFromRaw(rawHeaders);
    } catch (err) {
      // A framing the gateway does not relay (a transfer coding other than chunked): 502.
      this.abort(err as Error);
      return false;
    }
    if (retryableStatus(statusCode) && this.pool !== undefined) {
      // A target that says it cannot serve: another may (the answer is dropped with its connection).
      if (this.mayRetry(ex)) {
        reportResponse(call, 'backend', statusCode, this.started);
        this.retrying = `status ${statusCode}`;
        this.abortCall?.(new RetryAttempt());
        return false;
      }
    }
    this.resumeCall = resume;
    if (this.pool !== undefined) callOutcome(this.pool, statusCode >= 500);
    ex.upstreamStatus = statusCode;
    // From now on the body's idle deadline applies, if the route has one.
    this.watchFor(call.bodyTimeoutMs);
    reportResponse(call, 'backend', statusCode, this.started);
    headers['x-request-id'] = ex.requestId; // in the object: no setHeader (server/gateway-response.ts)
    const edit = call.route.editHeaders.response;
    if (edit !== undefined) editHeaderRecord(edit, headers, ex);
    try {
      return this.onResponse(ex, statusCode, headers);
    } catch (err) {
      // A header Node refuses to send (undici's parser is more lenient): 502, not a crash.
      this.abort(err as Error);
      return false;
    }
  }

  onData(chunk: Buffer): boolean {
    this.nextChunkDue();
    return this.onBody(chunk);
  }

  /** What a body chunk becomes (relayed to the client here); false pauses the backend connection. */
  protected onBody(chunk: Buffer): boolean {
    const res = this.ex?.res;
    if (res !== undefined && !res.write(chunk)) {
      this.waitingForClient = true;
      res.once('drain', this.onDrain);
      return false;
    }
    return true;
  }

  /** undici: a chunk of a streamed request body went out; the head is due a full wait after the last one. */
  onBodySent(): void {
    const ms = this.call.headersTimeoutMs;
    if (this.upload !== undefined && ms > 0) this.deadlineAt = this.call.deadlines.now() + ms;
  }

  /** undici: the whole request went out. */
  onRequestSent(): void {
    if (this.upload === undefined) return;
    this.onBodySent();
    this.upload = undefined;
  }

  /** The call is due `ms` from now and watched until it finishes; `ms` 0 means no deadline. */
  private watchFor(ms: number): void {
    const deadlines = this.call.deadlines;
    if (ms <= 0) return deadlines.unwatch(this);
    this.deadlineAt = deadlines.now() + ms;
    deadlines.watch(this, ms);
  }

  /** The body's next chunk is due a full idle wait from now (a chunk came, or the client drained). */
  private nextChunkDue(): void {
    const ms = this.call.bodyTimeoutMs;
    if (ms > 0) this.deadlineAt = this.call.deadlines.now() + ms;
  }

  /**
   * The sweep found the deadline passed (call-deadlines.ts). The call stays watched until it
   * finishes: an attempt that goes again on another target is held to the same deadline.
   */
  overdue(now: number): void {
    const ex = this.ex;
    if (ex === undefined || this.finished) return this.call.deadlines.unwatch(this);
    if (ex.upstreamStatus === undefined) return this.headOverdue(ex, now);
    // The body: not while the answer waits for the client (config.writeTimeoutSec is the client's limit).
    if (this.waitingForClient) return this.nextChunkDue();
    this.abort(new errors.BodyTimeoutError());
  }

  private headOverdue(ex: Exchange, now: number): void {
    if (this.abortCall === undefined) {
      // Still queued for a pooled connection: the client gets its 504 now, the call is dropped at dispatch.
      const why = new QueueTimeout();
      if (!this.settled) {
        this.fail(ex, why);
        this.settle();
      }
      this.abort(why);
      return;
    }
    // The client is still sending the body and the backend takes it: the client's own limit
    // (timeouts.clientBodySec) applies, not the backend's.
    if (this.upload === ex.req && !ex.req.isPaused()) {
      this.deadlineAt = now + this.call.headersTimeoutMs;
      return;
    }
    this.abort(new errors.HeadersTimeoutError());
  }

  onComplete(): void {
    this.ex?.res.end();
    this.finish();
    this.settle();
  }

  onError(err: Error): void {
    const ex = this.ex;
    const retrying = this.retrying;
    if (retrying !== undefined) {
      // The attempt given up in onHeaders ended: the next one goes out.
      this.retrying = undefined;
      if (ex !== undefined && !this.settled && !this.clientLeft) {
        this.retry(ex, retrying);
        return;
      }
    } else if (ex !== undefined && ex.upstreamStatus === undefined && this.pool !== undefined) {
      // No connection, or a reset before any answer: the target never worked on it.
      const kind = retryableFailure(err);
      if (kind !== undefined) {
        if (this.mayRetry(ex)) {
          this.retry(ex, kind);
          return;
        }
      }
    }
    if (ex !== undefined && !this.settled) {
      // A request body still streaming from the client has nowhere to go any more.
      if (!ex.req.complete && !ex.req.destroyed) ex.req.destroy();
      this.fail(ex, err);
    }
    this.finish();
    this.settle();
  }

  /** The failure path of every call: see `sendUpstreamFailure`. */
  protected fail(ex: Exchange, err: Error): void {
    // The target is to blame only for a call that got no answer and was not given up by the gateway.
    if (
      this.pool !== undefined &&
      ex.upstreamStatus === undefined &&
      !this.clientLeft &&
      !(err instanceof ClientGone) &&
      !(err instanceof QueueTimeout)
    )
      callOutcome(this.pool, true);
    sendUpstreamFailure(ex, err, this.call.upstream.origin.key, this.call.events, this.clientLeft);
  }

  /** The backend call ended: its connection is free, and the count drops. */
  protected finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.call.deadlines.unwatch(this);
    if (this.pool !== undefined) callEnded(this.pool);
    this.release();
  }

  /** The client has its answer: the pipeline goes on. */
  protected settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve?.();
    this.release();
  }

  private release(): void {
    if (!this.finished || !this.settled) return;
    this.ex = undefined;
    this.resolve = undefined;
  }
}
