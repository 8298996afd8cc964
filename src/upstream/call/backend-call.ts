/**
 * The gateway's call to a route's backend, for every endpoint that makes one (standard routes,
 * SSE streams, the primary call of a mapped route): the streaming handler on top of the
 * outbound-call core (./outbound-call.ts, which picks the pool, keeps the deadlines and decides
 * the retries). It adds what those calls share: the backend path and query, the request headers
 * and body, the 'upstream:response' report, one failure path and one reaction to a client that
 * leaves. Endpoints differ only in what they do with the answer: a subclass of `BackendCall`
 * decides in `onResponse`, and may take over `onBody` and `onComplete`.
 *
 * It writes the raw header list straight into the object `writeHead` takes, with no per-request
 * wrapper objects (docs/performance.md, "Why the hot path looks like this").
 *
 * What ends a call:
 *   onComplete   the client response ends                               -> finished, settled
 *   onFailure    one failure path: answer 502/504, or cut a started answer -> finished, settled
 * "Finished" is the backend call's end (the count drops); "settled" is the pipeline's resolve.
 * They can come apart: a 504 at the deadline of a call still queued for a connection settles
 * before the call is dropped, a mapped answer finishes its backend call before it is enriched and
 * settled.
 *
 * The body's deadline is an idle one: each chunk moves it. Like undici's own timers, a deadline
 * does not run out on the client: not while the client is still sending the body, nor while the
 * answer waits for the client to take what was written.
 */
import type { Dispatcher } from 'undici';
import type { Exchange } from '../../pipeline/types.js';
import { announcesBody, upstreamBody } from '../../pipeline/request-body.js';
import type { BackendPool } from '../types.js';
import { downstreamHeadersFromRaw } from '../headers/forward-headers.js';
import { editHeaderRecord } from '../headers/header-edits.js';
import { answerCompleted } from '../../response/answer-completed.js';
import { OutboundCall } from './outbound-call.js';
import { reportRetry } from './pool-use.js';
import { backendHeaders, backendPath, reportResponse, type RouteCall } from './route-call.js';
import { ClientGone, failCall, type QueueTimeout } from './failure.js';

/**
 * One call to the backend of one request; `start()` sends it, the pipeline's `resolve` runs once
 * the client has its answer. Subclasses say what an answer becomes (`onResponse`).
 */
export abstract class BackendCall extends OutboundCall<RouteCall> {
  private settled = false;
  /** The client left before its answer ended: the call's end is the client's outcome. */
  private clientLeft = false;
  /** The answer's head as the client gets it, parsed in onHeaders. */
  private head: Record<string, string | string[]> | undefined;
  /**
   * The exchange and the pipeline's resolve, dropped once the call is finished and settled:
   * undici keeps a finished handler reachable for a while, and the request's whole object graph
   * with it, long enough to be promoted to the old generation (docs/performance.md). Callbacks
   * that come later find them gone and do nothing.
   */
  protected ex: Exchange | undefined;
  private resolve: (() => void) | undefined;

  constructor(ex: Exchange, call: RouteCall, resolve: () => void) {
    // A plugin's beforeUpstream may have chosen another named upstream of the configuration.
    const target = ex.upstreamEdits?.target;
    super(target === undefined ? call : { ...call, upstream: target });
    this.ex = ex;
    this.resolve = resolve;
  }

  /** What the answer's head becomes (written, buffered...); false pauses the backend connection. */
  protected abstract onResponse(ex: Exchange, statusCode: number, headers: Record<string, string | string[]>): boolean;

  /** Dispatches the call. */
  start(): void {
    // A client that leaves must release the backend connection at once, so it can serve the next request.
    this.ex!.onClose = this.onClientClose;
    this.begin();
  }

  protected requestOn(pool: BackendPool): Dispatcher.DispatchOptions {
    const { call } = this;
    const ex = this.ex!;
    const body = upstreamBody(ex);
    this.upload = body === null || Buffer.isBuffer(body) ? undefined : body;
    return {
      path: backendPath(call.route, ex),
      method: ex.req.method === 'HEAD' ? 'HEAD' : call.method,
      headers: backendHeaders(call, ex, pool.origin.hostHeader),
      body,
      // 0: no timer of undici's; the deadlines are this call's (see the header comment).
      headersTimeout: 0,
      bodyTimeout: 0,
    };
  }

  protected stillWanted(): boolean {
    return this.ex !== undefined && !this.settled && !this.clientLeft;
  }

  /** A body streamed from the client is gone once sent: only a buffered one, or none, goes again. */
  protected override canResend(): boolean {
    return this.ex!.body !== undefined || !announcesBody(this.ex!.req);
  }

  protected override clientStillSending(): boolean {
    const req = this.ex?.req;
    return req !== undefined && this.upload === req && !req.isPaused();
  }

  protected reportHead(status: number): void {
    reportResponse(this.call, 'backend', status, this.started);
  }

  protected reportRetry(failed: BackendPool, reason: string): void {
    const { events, route, upstream } = this.call;
    reportRetry(events, { requestId: this.ex!.requestId, routeId: route.id, upstream }, failed, reason);
  }

  /** The exchange's `onClose`: the client response closed, finished or not. */
  readonly onClientClose = (): void => this.clientClosed();

  /** The client left (its response closed before it finished): release the backend connection. */
  protected clientClosed(): void {
    if (this.ex === undefined || answerCompleted(this.ex.res)) return;
    this.clientLeft = true;
    this.abort(new ClientGone());
  }

  /** Returns false to pause the backend connection's parser. */
  override onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true;
    if (this.ex === undefined || this.settled) {
      this.abort(new ClientGone());
      return false;
    }
    try {
      this.head = downstreamHeadersFromRaw(rawHeaders);
    } catch (err) {
      // A framing the gateway does not relay (a transfer coding other than chunked): 502.
      this.abort(err as Error);
      return false;
    }
    return super.onHeaders(statusCode, rawHeaders, resume);
  }

  protected onAnswer(statusCode: number): boolean {
    const ex = this.ex!;
    const headers = this.head!;
    this.head = undefined;
    ex.upstreamStatus = statusCode;
    headers['x-request-id'] = ex.requestId; // in the object: no setHeader (server/gateway-response.ts)
    const edit = this.call.route.editHeaders.response;
    if (edit !== undefined) editHeaderRecord(edit, headers, ex);
    // The route's onResponse plugins (src/layers/plugin.ts) edit the head before it goes out.
    const hook = ex.onResponseHead;
    if (hook !== undefined) {
      const go = hook.onResponseHead(statusCode, headers);
      if (go === false) return this.dropAnswer();
      if (go !== true) {
        // The backend waits, paused, while the plugins run: their own time limit bounds the wait,
        // and the body's idle deadline does not run meanwhile (as while the client is slow).
        this.waitingForClient = true;
        void go.then((write) => this.afterPlugins(write, statusCode, headers));
        return false;
      }
    }
    return this.writeAnswer(ex, statusCode, headers);
  }

  private writeAnswer(ex: Exchange, statusCode: number, headers: Record<string, string | string[]>): boolean {
    try {
      return this.onResponse(ex, statusCode, headers);
    } catch (err) {
      // A header Node refuses to send (undici's parser is more lenient): 502, not a crash.
      this.abort(err as Error);
      return false;
    }
  }

  /** The plugins of the head are done: the head goes out and the backend goes on, or the answer is dropped. */
  private afterPlugins(write: boolean, statusCode: number, headers: Record<string, string | string[]>): void {
    const ex = this.ex;
    this.waitingForClient = false;
    if (ex === undefined || this.settled || this.finished) return;
    if (!write) return void this.dropAnswer();
    this.nextChunkDue();
    if (this.writeAnswer(ex, statusCode, headers)) this.resumeCall?.();
  }

  /**
   * The plugins answered the client instead of the backend (or failed, and the gateway's error
   * went out): the backend's answer is not relayed, and its connection is released as when the
   * client leaves.
   */
  protected dropAnswer(): false {
    this.clientLeft = true;
    this.abort(new ClientGone());
    return false;
  }

  override onData(chunk: Buffer): boolean {
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

  /** Still queued for a pooled connection at the head's deadline: the client gets its 504 now. */
  protected onQueueOverdue(why: QueueTimeout): void {
    const ex = this.ex;
    if (ex === undefined || this.settled) return;
    this.fail(ex, why);
    this.settle();
  }

  onComplete(): void {
    this.ex?.res.end();
    this.finish();
    this.settle();
  }

  protected onFailure(err: Error): void {
    const ex = this.ex;
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
  protected override finish(): void {
    if (this.finished) return;
    super.finish();
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
