/**
 * The gateway's call to a route's backend, for every endpoint that makes one (standard routes,
 * SSE streams, the primary call of a mapped route). It owns what those calls share: the backend
 * path and query, the request headers and body, the pool the call goes out on and its in-flight
 * count, the 'upstream:response' report, one failure path and one reaction to a client that
 * leaves. Endpoints differ only in what they do with the answer: a subclass of `BackendCall`
 * decides in `onResponse`, and may take over `onData` and `onComplete`.
 *
 * A call is an undici dispatch handler (onConnect, onHeaders, onData, onComplete, onError), the
 * raw protocol undici's own `stream()` and `request()` use: it writes the raw header list straight
 * into the object `writeHead` takes, with no per-request wrapper objects (docs/performance.md,
 * "Why the hot path looks like this").
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
 * Deadlines are the gateway's, not undici's (./timed-call.ts, ./deadlines.ts). Like undici's own
 * timers, a deadline does not run out on the client: not while the client is still sending the
 * body, nor while the answer waits for the client to take what was written.
 */
import { errors, type Dispatcher } from 'undici';
import type { Exchange } from '../../pipeline/types.js';
import { upstreamBody } from '../../pipeline/request-body.js';
import type { BackendPool } from '../types.js';
import { downstreamHeadersFromRaw } from '../headers/forward-headers.js';
import { editHeaderRecord } from '../headers/header-edits.js';
import { answerCompleted } from '../../response/answer-completed.js';
import { TimedCall } from './timed-call.js';
import { callEnded, callOutcome } from './pool-count.js';
import { callStarted, reportRetry, retryableFailure, retryableStatus } from './pool-use.js';
import { backendHeaders, backendPath, reportResponse, retryAllowed, type RouteCall } from './route-call.js';
import { ClientGone, failCall, QueueTimeout, RetryAttempt } from './failure.js';

/**
 * One call to the backend of one request; `start()` sends it, the pipeline's `resolve` runs once
 * the client has its answer. Subclasses say what an answer becomes (`onResponse`).
 */
export abstract class BackendCall extends TimedCall implements Dispatcher.DispatchHandler {
  /** undici's abort for this call, from onConnect. */
  private abortCall: ((err?: Error) => void) | undefined;
  /** Set when the call must end before it got a connection: applied in onConnect. */
  private giveUp: Error | undefined;
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
    super(call);
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

  /** Whether this failed attempt goes again on another target (`retryAllowed`), for a client still waiting. */
  private mayRetry(ex: Exchange): boolean {
    if (this.settled || this.clientLeft || this.giveUp !== undefined) return false;
    return retryAllowed(this.call, ex, this.retried, this.deadlineAt - this.call.deadlines.now());
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
    // A target that says it cannot serve: another may (the answer is dropped with its connection).
    if (retryableStatus(statusCode) && this.pool !== undefined && this.mayRetry(ex)) {
      reportResponse(call, 'backend', statusCode, this.started);
      this.retrying = `status ${statusCode}`;
      this.abortCall?.(new RetryAttempt());
      return false;
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

  /**
   * The sweep found the deadline passed (./deadlines.ts). The call stays watched until it
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
    if (this.upload === ex.req && !ex.req.isPaused()) this.deadlineAt = now + this.call.headersTimeoutMs;
    else this.abort(new errors.HeadersTimeoutError());
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
      if (ex !== undefined && !this.settled && !this.clientLeft) return this.retry(ex, retrying);
    } else if (ex !== undefined && ex.upstreamStatus === undefined && this.pool !== undefined) {
      // No connection, or a reset before any answer: the target never worked on it.
      const kind = retryableFailure(err);
      if (kind !== undefined && this.mayRetry(ex)) return this.retry(ex, kind);
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
    failCall(this.pool, ex, err, this.call, this.clientLeft);
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
