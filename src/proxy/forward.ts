/**
 * The endpoint of standard routes: the request is streamed to the backend and the answer streamed
 * back, never buffered. The call is one undici dispatch handler per request that writes the
 * backend's head and body chunks straight into the client response. That is `Pool.stream()`
 * without its per-request AbortController, AsyncResource and `finished()` listeners, which showed
 * in the profile of a proxied request: the client's 'close' aborts the call through the handler
 * instead.
 *
 * The handler speaks undici's raw protocol (onConnect, onHeaders, onData, onComplete, onError),
 * the one undici's own `stream()` and `request()` use, typed deprecated in favour of the
 * controller API. That API wraps every handler in two more objects and parses the response head
 * into an object this module copied again; the raw header list is built straight into the object
 * `writeHead` takes. Flat `[name, value, ...]` arrays are slower in `writeHead` than the object,
 * hence the object (figures in docs/performance.md).
 */
import type { Dispatcher } from 'undici';
import type { Exchange, Step } from '../pipeline/step.js';
import type { CompiledRoute } from '../config/compile.js';
import type { Upstream } from '../upstream/upstream.js';
import { appendQuery } from '../upstream/target-url.js';
import { downstreamHeadersFromRaw, upstreamRequestHeaders } from '../upstream/forward-headers.js';
import { sendError } from '../response/send-error.js';
import { bufferedLength, upstreamBody } from '../guards/request-buffer.js';
import { answerUpstreamFailure } from '../upstream/upstream-failure.js';
import type { EventBus } from '../observability/events.js';

export interface ForwardOptions {
  readonly upstream: Upstream;
  readonly dropHeaders: ReadonlySet<string>;
  /** No response headers within this time: 504. */
  readonly headersTimeoutMs: number;
  /** Longest silence between two body chunks; 0 for none (SSE). */
  readonly bodyTimeoutMs: number;
  readonly events: EventBus;
}

/** What every call of one route shares, fixed at config load. */
interface RouteCall {
  readonly route: CompiledRoute;
  readonly options: ForwardOptions;
}

/** Why a call was given up before undici handed it a connection (applied at dispatch). */
class ClientGone extends Error {
  readonly code = 'UND_ERR_ABORTED';
  constructor() {
    super('client closed the connection');
  }
}

class ForwardCall implements Dispatcher.DispatchHandler {
  /** undici's abort for this call, from onConnect. */
  private abortCall: ((err?: Error) => void) | undefined;
  /** Resumes the backend connection's parser after onData returned false. */
  private resumeCall: (() => void) | undefined;
  /** Set when the call must end before it got a connection: applied in onConnect. */
  private giveUp: Error | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private settled = false;
  private finished = false;
  private readonly started = performance.now();
  private readonly onDrain = () => this.resumeCall?.();
  /**
   * The exchange and the pipeline's resolve, dropped once the call is finished and settled:
   * undici keeps a finished handler reachable for a while, and the request's whole object graph
   * with it, long enough to be promoted to the old generation (docs/performance.md). Callbacks that come later find them gone and do nothing.
   */
  private ex: Exchange | undefined;
  private resolve: (() => void) | undefined;

  constructor(
    ex: Exchange,
    private readonly call: RouteCall,
    resolve: () => void,
  ) {
    this.ex = ex;
    this.resolve = resolve;
  }

  /** The client left (its response closed before it finished): release the backend connection. */
  readonly onClientClose = (): void => {
    if (this.ex === undefined || this.ex.res.writableFinished) return;
    this.abort(new ClientGone());
  };

  abort(reason: Error): void {
    if (this.abortCall !== undefined) this.abortCall(reason);
    else this.giveUp ??= reason;
  }

  /**
   * undici starts headersTimeout when the request gets a connection. With every pooled connection
   * busy the request first waits in the queue: so the gateway answers the 504 itself at the
   * deadline (backendSec after arrival) and the queued call is dropped at dispatch.
   */
  armQueueDeadline(ms: number): void {
    this.deadline = setTimeout(() => {
      const { ex, call } = this;
      const why = new Error('no connection and no response headers within backendSec');
      if (ex !== undefined && ex.upstreamStatus === undefined && !this.settled) {
        // Answered before the abort: aborting a dispatched call reports its error synchronously.
        ex.upstreamFailure = 'timeout';
        ex.errorCode = 'GW_UPSTREAM_TIMEOUT';
        call.options.events.emit('upstream:error', {
          requestId: ex.requestId,
          routeId: call.route.id,
          origin: call.options.upstream.origin.key,
          kind: 'timeout',
          error: why,
        });
        sendError(ex.res, 'GW_UPSTREAM_TIMEOUT');
        this.settle();
      }
      this.abort(why);
    }, ms);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortCall = abort;
    if (this.giveUp !== undefined) abort(this.giveUp);
  }

  /** Returns false to pause the backend connection's parser. */
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // 1xx (103 Early Hints...) are the backend's to the gateway, not forwarded.
    if (statusCode < 200) return true;
    if (this.deadline !== undefined) clearTimeout(this.deadline);
    const { ex, call } = this;
    if (ex === undefined || this.settled) {
      this.abort(new ClientGone());
      return false;
    }
    let out: Record<string, string | string[]>;
    try {
      out = downstreamHeadersFromRaw(rawHeaders);
    } catch (err) {
      // A framing the gateway does not relay (a transfer coding other than chunked): 502.
      this.abort(err as Error);
      return false;
    }
    this.resumeCall = resume;
    ex.upstreamStatus = statusCode;
    call.options.events.emit('upstream:response', {
      routeId: call.route.id,
      origin: call.options.upstream.origin.key,
      call: 'backend',
      status: statusCode,
      durationMs: performance.now() - this.started,
    });
    out['x-request-id'] = ex.requestId; // in the object: no setHeader (server/gateway-response.ts)
    // A 204 never has a body, so no length either (RFC 9110 8.6).
    if (statusCode === 204) delete out['content-length'];
    try {
      ex.res.writeHead(statusCode, out);
    } catch (err) {
      // A header Node refuses to send (undici's parser is more lenient): 502, not a crash.
      this.abort(err as Error);
      return false;
    }
    // 204 and 304 have no body whatever their Content-Length says (a 304 may carry the length of
    // the 200 it stands for): the answer is complete now. undici reports such a 304 as a length
    // mismatch once it sees no body; by then the answer is out and the error changes nothing.
    if (statusCode === 204 || statusCode === 304) {
      ex.res.end();
      this.settle();
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    const res = this.ex?.res;
    if (res !== undefined && !res.write(chunk)) {
      res.once('drain', this.onDrain);
      return false;
    }
    return true;
  }

  onComplete(): void {
    this.ex?.res.end();
    this.finish();
    this.settle();
  }

  onError(err: Error): void {
    const { ex, call } = this;
    if (ex !== undefined && !this.settled) {
      // A request body still streaming from the client has nowhere to go any more.
      if (!ex.req.complete && !ex.req.destroyed) ex.req.destroy();
      answerUpstreamFailure(ex, err, call.options.upstream.origin.key, call.options.events);
    }
    this.finish();
    this.settle();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.call.options.upstream.load.inFlight--;
    if (this.deadline !== undefined) clearTimeout(this.deadline);
    if (this.ex !== undefined) this.ex.onClose = undefined;
    this.release();
  }

  private settle(): void {
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

export function forwardEndpoint(route: CompiledRoute, options: ForwardOptions): Step {
  const { upstream, dropHeaders, headersTimeoutMs, bodyTimeoutMs } = options;
  const { pool, origin, load } = upstream;
  const call: RouteCall = { route, options };
  const template = route.path;
  const buildPath = route.buildPath;
  const method = route.method as Dispatcher.HttpMethod;

  return (ex) =>
    new Promise<void>((resolve) => {
      const { req } = ex;
      const handler = new ForwardCall(ex, call, resolve);
      // A client that leaves must release the backend connection at once, so it can serve the next request.
      ex.onClose = handler.onClientClose;
      if (load.inFlight >= load.connections) handler.armQueueDeadline(headersTimeoutMs);
      load.inFlight++;
      pool.dispatch(
        {
          path: appendQuery(buildPath(ex.params), template, ex.rawQuery),
          method: req.method === 'HEAD' ? 'HEAD' : method,
          headers: upstreamRequestHeaders(
            {
              req,
              requestId: ex.requestId,
              hostHeader: origin.hostHeader,
              claimHeaders: ex.claimHeaders,
              bodyLength: bufferedLength(ex),
            },
            dropHeaders,
          ),
          body: upstreamBody(ex),
          headersTimeout: headersTimeoutMs,
          bodyTimeout: bodyTimeoutMs,
        },
        handler,
      );
    });
}
