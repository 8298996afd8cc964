/**
 * The outbound-call core: one undici dispatch handler per call that decides, for every kind of
 * call the gateway makes on an upstream's pools (a route's streamed call, a JSON call), which
 * pool each attempt goes out on and how it is counted, when the call is overdue, whether a failed
 * attempt goes again on another target (with the upstream's retry budget), and when each event of
 * the call is reported. Handlers on top say only what the call is and what its answer becomes:
 * `BackendCall` streams it to the client (./backend-call.ts), `JsonCall` reads it as JSON
 * (./json-call.ts), the way undici has one `dispatch` with `api-stream` and `api-request` on top.
 *
 * Lifecycle of one call, and what ends it:
 *   begin        the upstream's budget counts the call; the first attempt goes out
 *   attempt      pick the pool (another than the one that just failed), count the call, dispatch
 *   onConnect    a connection: a call given up meanwhile (client gone, deadline) aborts now
 *   onHeaders    1xx skipped; a 502/503 that may go again is dropped with its connection;
 *                otherwise the target's health, the report, `onAnswer`; the body's deadline starts
 *   onData       `onBody`
 *   onComplete   the handler's
 *   onError      a failure before any answer that another target may not have goes again;
 *                otherwise `onFailure`
 *
 * Deadlines are the gateway's, kept by one sweep (./timed-call.ts, ./deadlines.ts): the head is
 * due `headersTimeoutMs` after the call began (or, for a call that `headDueFromConnection`, after
 * its first attempt got a connection), and every attempt of the call is held to that one deadline.
 */
import { errors, type Dispatcher } from 'undici';
import type { BackendPool, Upstream } from '../types.js';
import { TimedCall } from './timed-call.js';
import type { DeadlineSweep } from './deadlines.js';
import { callEnded, callOutcome } from './pool-count.js';
import { callStarted, retryableFailure, retryableStatus } from './pool-use.js';
import { QueueTimeout, RetryAttempt } from './failure.js';

/** What the core needs to know of a call, fixed before it starts (a `RouteCall` is one). */
export interface CallPlan {
  readonly upstream: Upstream;
  /** Long-lived answers: the call goes out on the upstream's stream pool. */
  readonly streaming: boolean;
  /** A gRPC call: it goes out on the upstream's HTTP/2 pool. */
  readonly grpc?: boolean;
  /** No response head within this time: the call is overdue. */
  readonly headersTimeoutMs: number;
  /** The body's deadline once the head came (the handler says whether a chunk moves it). */
  readonly bodyTimeoutMs: number;
  /** Attempts after a failure another target may not have, on a named upstream with a retry budget. */
  readonly retries: number;
  readonly deadlines: DeadlineSweep;
}

export abstract class OutboundCall<P extends CallPlan = CallPlan>
  extends TimedCall
  implements Dispatcher.DispatchHandler
{
  /** undici's abort for this attempt, from onConnect. */
  private abortCall: ((err?: Error) => void) | undefined;
  /** Set when the call must end before it got a connection: applied in onConnect. */
  protected giveUp: Error | undefined;
  protected pool: BackendPool | undefined;
  /** Attempts made again after a failed one. */
  private retried = 0;
  /** Why the attempt being dropped in onHeaders goes again. */
  private retrying: string | undefined;
  /** The answer's head came (the call's body deadline applies from then on). */
  protected headArrived = false;
  protected finished = false;
  protected readonly started = performance.now();

  constructor(protected readonly call: P) {
    super(call);
  }

  /** The head is due from the first attempt's connection rather than from `begin` (no time in the pool's queue counts). */
  protected get headDueFromConnection(): boolean {
    return false;
  }

  /** What one attempt sends on `pool`. */
  protected abstract requestOn(pool: BackendPool): Dispatcher.DispatchOptions;
  /** Whether someone still waits for the answer (a retry is pointless otherwise). */
  protected abstract stillWanted(): boolean;
  /** Reports an answer's head ('upstream:response'), kept or dropped for a retry. */
  protected abstract reportHead(status: number): void;
  /** Reports that the call goes again, away from `failed` ('upstream:retry'). */
  protected abstract reportRetry(failed: BackendPool, reason: string): void;
  /** The answer the call keeps: false pauses the backend connection. */
  protected abstract onAnswer(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean;
  /** A chunk of the kept answer's body: false pauses the backend connection. */
  protected abstract onBody(chunk: Buffer): boolean;
  /** The call failed for good (no attempt goes again): the handler answers and ends it. */
  protected abstract onFailure(err: Error): void;
  /** The head's deadline passed while an attempt still waits for a connection; the call is dropped at dispatch. */
  protected abstract onQueueOverdue(why: QueueTimeout): void;
  abstract onComplete(): void;

  /** Whether this call's request body can be sent again (a retry needs it). */
  protected canResend(): boolean {
    return true;
  }

  /** The backend is still taking a request body the client is still sending: its head is not due yet. */
  protected clientStillSending(): boolean {
    return false;
  }

  /** Counts the call on the upstream's budget and sends the first attempt. */
  protected begin(): void {
    this.call.upstream.retryBudget?.call();
    if (!this.headDueFromConnection) this.watchFor(this.call.headersTimeoutMs);
    this.attempt(undefined);
  }

  /** Sends one attempt on a pool (another than `avoid` when there is one), counted on it. */
  private attempt(avoid: BackendPool | undefined): void {
    const pool = callStarted(this.call.upstream, this.call.streaming, avoid, this.call.grpc);
    this.pool = pool;
    pool.dispatcher.dispatch(this.requestOn(pool), this);
  }

  /**
   * Whether this failed attempt goes again on another target: someone still waits, a retry left
   * for the call and in the upstream's budget (taken when it does), a body that can be sent
   * again, and time left before the call's deadline.
   */
  private mayRetry(): boolean {
    if (this.giveUp !== undefined || !this.stillWanted()) return false;
    if (this.retried >= this.call.retries || !this.canResend()) return false;
    if (this.deadlineAt - this.call.deadlines.now() < 1) return false;
    return this.call.upstream.retryBudget?.tryRetry() === true;
  }

  /** Ends a failed attempt and sends the next one (the deadline keeps running). */
  private retry(reason: string): void {
    const failed = this.pool!;
    callOutcome(failed, true);
    callEnded(failed);
    this.pool = undefined;
    this.abortCall = undefined;
    this.resumeCall = undefined;
    this.retried++;
    this.reportRetry(failed, reason);
    this.attempt(failed);
  }

  /** Ends the call; before it has a connection, at dispatch. Nothing once it finished. */
  abort(reason: Error): void {
    if (this.finished) return;
    if (this.abortCall !== undefined) this.abortCall(reason);
    else this.giveUp ??= reason;
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortCall = abort;
    if (this.giveUp !== undefined) return abort(this.giveUp);
    if (this.headDueFromConnection && this.deadlineAt === Number.POSITIVE_INFINITY)
      this.watchFor(this.call.headersTimeoutMs);
  }

  /** Returns false to pause the backend connection's parser. */
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // 1xx (103 Early Hints...) are the backend's to the gateway, not forwarded.
    if (statusCode < 200) return true;
    // A target that says it cannot serve: another may (the answer is dropped with its connection).
    if (retryableStatus(statusCode) && this.pool !== undefined && this.mayRetry()) {
      this.reportHead(statusCode);
      this.retrying = `status ${statusCode}`;
      this.abortCall?.(new RetryAttempt());
      return false;
    }
    this.resumeCall = resume;
    this.headArrived = true;
    if (this.pool !== undefined) callOutcome(this.pool, statusCode >= 500);
    this.watchFor(this.call.bodyTimeoutMs);
    this.reportHead(statusCode);
    return this.onAnswer(statusCode, rawHeaders, resume);
  }

  onData(chunk: Buffer): boolean {
    return this.onBody(chunk);
  }

  /**
   * The sweep found the deadline passed (./deadlines.ts). The call stays watched until it
   * finishes: an attempt that goes again on another target is held to the same deadline.
   */
  overdue(now: number): void {
    if (this.finished) return this.call.deadlines.unwatch(this);
    if (!this.headArrived) return this.headOverdue(now);
    // The body: not while the answer waits for the client (config.writeTimeoutSec is the client's limit).
    if (this.waitingForClient) return this.nextChunkDue();
    this.abort(new errors.BodyTimeoutError());
  }

  private headOverdue(now: number): void {
    if (this.abortCall === undefined) {
      const why = new QueueTimeout();
      this.onQueueOverdue(why);
      this.abort(why);
      return;
    }
    // The client's own limit (timeouts.clientBodySec) applies while it sends, not the backend's.
    if (this.clientStillSending()) this.deadlineAt = now + this.call.headersTimeoutMs;
    else this.abort(new errors.HeadersTimeoutError());
  }

  onError(err: Error): void {
    const retrying = this.retrying;
    if (retrying !== undefined) {
      // The attempt given up in onHeaders ended: the next one goes out.
      this.retrying = undefined;
      if (this.stillWanted()) return this.retry(retrying);
    } else if (!this.headArrived && this.pool !== undefined) {
      // No connection, or a reset before any answer: the target never worked on it.
      const kind = retryableFailure(err);
      if (kind !== undefined && this.mayRetry()) return this.retry(kind);
    }
    this.onFailure(err);
  }

  /** The call ended: its connection is free, and the count drops. */
  protected finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.call.deadlines.unwatch(this);
    if (this.pool !== undefined) callEnded(this.pool);
  }
}
