/**
 * The endpoint of gRPC routes (`grpc: true`, docs/routing.md "gRPC"): each call is one HTTP/2
 * stream to the backend, on the upstream's gRPC pool (upstream/pools.ts), with the request's
 * messages streamed to it as the client sends them and the answer's streamed back as the backend
 * writes them, at once in both directions (client-, server- and bidi-streaming calls).
 *
 * What the gateway adds to a plain forward:
 * - `te: trailers` to the backend (gRPC servers may require it; every other TE value is
 *   hop-by-hop and dropped with it, upstream/trust-boundary.ts);
 * - the backend's trailers (`grpc-status`, `grpc-message`, trailing metadata) relayed as trailers,
 *   and a backend's Trailers-Only answer (its status in the one HEADERS frame that ends the
 *   stream) relayed as one too, since a gRPC client reads the status only from a frame that ends
 *   the stream;
 * - the client's `grpc-timeout`: the whole call must end by then, else the gateway answers
 *   DEADLINE_EXCEEDED and cancels the backend stream (the header itself goes on to the backend,
 *   so it can stop its work too). The route's `timeouts.backendSec` still bounds the wait for the
 *   answer's head, whichever comes first; there is no idle limit between messages (a stream may
 *   be quiet for long);
 * - failures as gRPC statuses, also once the answer started (response/grpc-status.ts);
 * - a request whose whole body is in when the call starts (a unary call's one message usually
 *   comes with its head) is sent as that buffer, not as a stream: undici's HTTP/2 client sends a
 *   streamed body only on a connection with no other call in flight (a stream cannot be resent
 *   if a sibling call fails the connection), so streamed unary calls took a connection each and
 *   queued behind each other, where buffered ones share one connection as HTTP/2 streams.
 */
import type { ServerHttp2Stream } from 'node:http2';
import type { CompiledRoute, Exchange, Step } from '../pipeline/types.js';
import type { Dispatcher } from 'undici';
import type { BackendPool } from '../upstream/types.js';
import { BackendCall } from '../upstream/call/backend-call.js';
import { createRouteCall, type BackendCallOptions, type RouteCall } from '../upstream/call/route-call.js';
import { downstreamResponseHeaders } from '../upstream/headers/forward-headers.js';
import { sendError } from '../response/send-error.js';
import { grpcStatusFields, isGrpcContentType } from '../response/grpc-status.js';
import { announcesBody } from '../pipeline/request-body.js';

const firstValue = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

export type GrpcOptions = Omit<BackendCallOptions, 'identityEncoding' | 'streaming' | 'grpc' | 'bodyTimeoutMs'>;

/** The client's `grpc-timeout` ran out: the call is ended by the gateway, not failed by the backend. */
export class CallDeadlineExceeded extends Error {
  readonly code = 'ETIMEDOUT';
  constructor() {
    super('the call passed its grpc-timeout');
  }
}

const UNIT_MS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 1e-3, n: 1e-6 };

/**
 * A `grpc-timeout` value in milliseconds (at most 8 digits and a unit: `H`ours, `M`inutes,
 * `S`econds, `m`illi-, `u` micro-, `n` nanoseconds); undefined when absent or malformed.
 */
export function grpcTimeoutMs(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  return m === null ? undefined : Number(m[1]) * UNIT_MS[m[2]!]!;
}

/** One gRPC call through the gateway. */
export class GrpcCall extends BackendCall {
  /** When the client's `grpc-timeout` runs out, on the deadline sweep's clock; Infinity without one. */
  private readonly callDeadlineAt: number;
  /** The head of a Trailers-Only answer, written when the backend's stream ends. */
  private trailersOnly: { status: number; headers: Record<string, string | string[]> } | undefined;
  /** The answer is a gRPC one (200, application/grpc) whose status is still to come, in its trailers. */
  private statusDue = false;

  constructor(ex: Exchange, call: RouteCall, resolve: () => void) {
    super(ex, call, resolve);
    const ms = grpcTimeoutMs(ex.req.headers['grpc-timeout']);
    this.callDeadlineAt = ms === undefined ? Number.POSITIVE_INFINITY : call.deadlines.now() + ms;
  }

  protected override requestOn(pool: BackendPool): Dispatcher.DispatchOptions {
    const options = super.requestOn(pool);
    (options.headers as string[]).push('te', 'trailers');
    // undici sends a request it does not call idempotent only on an idle HTTP/2 connection: one
    // call per connection. Nothing here resends a call on its own (retries are the route's).
    return { ...options, idempotent: true };
  }

  protected onResponse(ex: Exchange, statusCode: number, headers: Record<string, string | string[]>): boolean {
    // The backend's outcome is on the exchange: the circuit may settle now, not when a stream ends.
    ex.onResponseStart?.();
    if (headers['grpc-status'] !== undefined) this.trailersOnly = { status: statusCode, headers };
    else {
      this.statusDue = statusCode === 200 && isGrpcContentType(firstValue(headers['content-type']));
      ex.res.writeHead(statusCode, headers);
      ex.res.flushHeaders();
    }
    return true;
  }

  override onComplete(trailers?: Record<string, string | string[] | undefined> | null): void {
    const res = this.ex?.res;
    if (res !== undefined && !res.destroyed) {
      const only = this.trailersOnly;
      if (only !== undefined) {
        // Written by `end()`, the head goes out as one HEADERS frame that ends the stream.
        res.statusCode = only.status;
        for (const name in only.headers) res.setHeader(name, only.headers[name]!);
      } else if (this.statusDue && trailers?.['grpc-status'] === undefined) this.cutShort(res);
      else if (trailers != null) res.addTrailers(downstreamResponseHeaders(trailers));
    }
    super.onComplete();
  }

  /**
   * A gRPC answer that ends without a status was cut: the backend reset its stream (undici's
   * HTTP/2 client reports a reset after the head as the end of the answer) or closed without
   * one. Its client gets UNAVAILABLE, the status of a failure it may retry, rather than its own
   * "no status received".
   */
  private cutShort(res: Exchange['res']): void {
    const ex = this.ex!;
    const { events, route, upstream } = this.call;
    ex.errorCode = 'GW_UPSTREAM_UNREACHABLE';
    const error = new Error('the backend ended a gRPC answer without grpc-status');
    events.emit('upstream:error', {
      requestId: ex.requestId,
      routeId: route.id,
      origin: upstream.origin.key,
      kind: 'reset',
      error,
    });
    res.addTrailers(grpcStatusFields('GW_UPSTREAM_UNREACHABLE', 'The backend ended the call without a status'));
  }

  protected override watchFor(ms: number): void {
    super.watchFor(ms);
    this.keepCallDeadline();
  }

  protected override nextChunkDue(): void {
    super.nextChunkDue();
    this.keepCallDeadline();
  }

  override onBodySent(): void {
    super.onBodySent();
    this.keepCallDeadline();
  }

  /** Whichever deadline the call has now, the client's `grpc-timeout` comes first when sooner. */
  private keepCallDeadline(): void {
    const at = this.callDeadlineAt;
    if (at === Number.POSITIVE_INFINITY || this.finished) return;
    // Watched with no deadline of its own (no idle limit once the head came): the call's.
    if (this.sweepBy === undefined || this.deadlineAt > at) this.deadlineAt = at;
    this.call.deadlines.watch(this, Math.max(1, at - this.call.deadlines.now()));
  }

  override overdue(now: number): void {
    if (this.finished || now < this.callDeadlineAt) {
      super.overdue(now);
      this.keepCallDeadline();
      return;
    }
    this.deadlineAt = Number.POSITIVE_INFINITY;
    const why = new CallDeadlineExceeded();
    // Answered now, connected or not; the backend stream is then cancelled.
    this.onQueueOverdue(why);
    this.abort(why);
  }

  protected override fail(ex: Exchange, err: Error): void {
    if (!(err instanceof CallDeadlineExceeded)) return super.fail(ex, err);
    // The client's deadline: neither the target's health nor the circuit counts it.
    if (ex.upstreamStatus === undefined) ex.upstreamFailure = 'aborted';
    ex.errorCode = 'GW_UPSTREAM_TIMEOUT';
    sendError(ex.res, 'GW_UPSTREAM_TIMEOUT', undefined, 'Deadline exceeded (grpc-timeout) waiting for the backend');
  }
}

/** The endpoint of a `grpc: true` route. */
export function grpcEndpoint(route: CompiledRoute, options: GrpcOptions): Step {
  // No idle limit between messages: a stream may be quiet for long; grpc-timeout bounds the call.
  const call = createRouteCall(route, { ...options, bodyTimeoutMs: 0, grpc: true });
  return (ex) =>
    new Promise<void>((resolve) => {
      const grpcCall = new GrpcCall(ex, call, resolve);
      if (ex.body !== undefined || !announcesBody(ex.req)) grpcCall.start();
      // The head is parsed before the frames that came with it: look once they have been read.
      else setImmediate(startWithBody, ex, grpcCall);
    });
}

/**
 * Starts `grpcCall` with the request's body as one buffer when the client has sent all of it
 * (END_STREAM received; reading it then waits for no one), else with the body streamed as it
 * comes, as client- and bidi-streaming calls need.
 */
function startWithBody(ex: Exchange, grpcCall: GrpcCall): void {
  // An HTTP/2 request carries its stream (server/http2-request.ts).
  const req = ex.req as typeof ex.req & { readonly stream?: ServerHttp2Stream };
  const state = req.stream?.state;
  if (ex.res.writableEnded || state?.remoteClose !== 1) return grpcCall.start();
  const chunks: Buffer[] = [];
  const onData = (chunk: Buffer) => chunks.push(chunk);
  const done = () => {
    req.off('data', onData);
    req.off('end', done);
    req.off('close', done);
    // Cut (the size limit's 413, a reset): the call starts and ends as the exchange says.
    if (req.readableEnded) ex.body = Buffer.concat(chunks);
    grpcCall.start();
  };
  req.on('data', onData);
  req.on('end', done);
  req.on('close', done);
  // The size limit's counter paused it (layers/body-limit.ts): it counts these chunks too.
  req.resume();
}
