/**
 * The endpoint of SSE routes (docs/design-decisions.md "Streaming"): the backend's
 * event stream reaches the client chunk by chunk, as the backend writes it.
 *
 * What makes that true, end to end:
 * - the response head is flushed the moment the backend's head arrives (`flushHeaders`), so a
 *   client sees `200 text/event-stream` before the first event;
 * - every chunk undici reads is one `res.write`, sent at once: Nagle is off on the client socket
 *   (undici turns it off on backend sockets), and the gateway never compresses;
 * - the backend is asked for `accept-encoding: identity`: compressing backends buffer events;
 * - `X-Accel-Buffering: no` tells nginx-style proxies in front of the gateway not to buffer;
 * - no body timeout once the head arrived (an idle stream is normal); the head itself must come
 *   within `timeouts.backendSec` (504 otherwise);
 * - a client that leaves aborts the backend request at once; a backend that ends ends the client
 *   response. A departure is reported as 'client:closed', never as an upstream error. Cutting a
 *   response mid-body costs its backend connection over HTTP/1.1: it cannot go back to the pool
 *   with the rest of an endless body unread, so the next stream opens a new one; over HTTP/2
 *   only the stream is reset (docs/streaming.md).
 *
 * Streams run on the upstream's stream pool (unlimited connections), never on the 64-connection
 * pool of standard and mapping calls, which a thousand idle streams would otherwise starve.
 *
 * When the gateway starts draining it ends open streams itself (./open-streams.ts): the client
 * response is finished cleanly (the client sees a normal end and reconnects elsewhere) and the
 * backend stream is aborted; what the backend still sends is dropped.
 */
import type { CompiledRoute, Exchange, Step } from '../pipeline/types.js';
import { BackendCall } from '../upstream/call/backend-call.js';
import { createRouteCall, type BackendCallOptions, type RouteCall } from '../upstream/call/route-call.js';
import type { OpenStreams } from './open-streams.js';

export interface SseOptions extends Omit<BackendCallOptions, 'identityEncoding' | 'streaming' | 'bodyTimeoutMs'> {
  /** Open streams, ended by the gateway when it drains; none when not given. */
  readonly streams?: OpenStreams | undefined;
}

/** Why the backend stream was cut when the gateway ended it (draining): no failure to report. */
class EndedByGateway extends Error {
  readonly code = 'UND_ERR_ABORTED';
  constructor() {
    super('stream ended by the gateway (draining)');
  }
}

/** One stream: the head flushed at once, then every chunk as it comes. */
export class SseCall extends BackendCall {
  /** When the stream opened (a 2xx head went out); undefined for other answers. */
  private opened: number | undefined;
  private unregister: (() => void) | undefined;
  private endedByGateway = false;

  constructor(
    ex: Exchange,
    call: RouteCall,
    resolve: () => void,
    private readonly streams: OpenStreams | undefined,
  ) {
    super(ex, call, resolve);
  }

  protected onResponse(ex: Exchange, statusCode: number, headers: Record<string, string | string[]>): boolean {
    const { res } = ex;
    // The backend's outcome is on the exchange: the circuit may settle now, not when the stream ends.
    ex.onResponseStart?.();
    headers['x-accel-buffering'] = 'no';
    res.writeHead(statusCode, headers);
    res.flushHeaders();
    // A 2xx head starts the stream; anything else is an ordinary (error) answer.
    if (statusCode >= 300) return true;
    const routeId = this.call.route.id;
    this.call.events.emit('stream:open', { kind: 'sse', routeId });
    this.opened = performance.now();
    this.unregister = this.streams?.add(() => {
      if (res.writableEnded || res.destroyed) return;
      this.endedByGateway = true;
      res.end();
      this.abort(new EndedByGateway());
    });
    return true;
  }

  protected override onBody(chunk: Buffer): boolean {
    return this.endedByGateway || super.onBody(chunk);
  }

  protected override fail(ex: Exchange, err: Error): void {
    if (!this.endedByGateway) super.fail(ex, err);
  }

  protected override clientClosed(): void {
    if (this.opened !== undefined) {
      this.unregister?.();
      const durationMs = performance.now() - this.opened;
      this.opened = undefined;
      this.call.events.emit('stream:close', { kind: 'sse', routeId: this.call.route.id, durationMs });
    }
    super.clientClosed();
  }
}

/** The endpoint of an `isSSE` route. */
export function sseEndpoint(route: CompiledRoute, options: SseOptions): Step {
  // No body timeout once the head arrived: an idle stream is normal.
  const call = createRouteCall(route, { ...options, bodyTimeoutMs: 0, identityEncoding: true, streaming: true });
  const streams = options.streams;
  return (ex) =>
    new Promise<void>((resolve) => {
      ex.req.socket.setNoDelay(true);
      new SseCall(ex, call, resolve, streams).start();
    });
}
