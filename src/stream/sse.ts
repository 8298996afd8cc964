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
 *   response (undici's `stream()` ends the writable it was given). A departure is reported as
 *   'client:closed', never as an upstream error. Cutting a response mid-body costs its backend
 *   connection: it cannot go back to the pool, so the next stream opens a new one.
 *
 * Streams run on the upstream's `streamPool` (unlimited connections), never on the 64-connection
 * pool of standard and mapping calls, which a thousand idle streams would otherwise starve.
 *
 * When the gateway starts draining it ends open streams itself (./open-streams.ts): the client
 * response is finished cleanly (the client sees a normal end and reconnects elsewhere) and the
 * backend stream is aborted. undici destroys the writable it streams into when its request is
 * aborted, so a stream is written through a thin relay (`relayTo`) that can be detached first.
 */
import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import type { Step } from '../pipeline/step.js';
import type { CompiledRoute } from '../config/compile.js';
import type { Upstream } from '../upstream/upstream.js';
import type { EventBus } from '../observability/events.js';
import { appendQuery } from '../upstream/target-url.js';
import { downstreamResponseHeaders, upstreamRequestHeaders } from '../upstream/forward-headers.js';
import { answerUpstreamFailure } from '../upstream/upstream-failure.js';
import { upstreamBody } from '../guards/request-buffer.js';
import type { OpenStreams } from './open-streams.js';

export interface SseOptions {
  readonly upstream: Upstream;
  /** Client headers never forwarded (from the pipeline deps). */
  readonly dropHeaders: ReadonlySet<string>;
  /** No response head from the backend within this time: 504. The body has no timeout. */
  readonly headersTimeoutMs: number;
  readonly events: EventBus;
  /** Open streams, ended by the gateway when it drains; none when not given. */
  readonly streams?: OpenStreams;
}

/** Response headers of a stream: the backend's end-to-end headers plus `X-Accel-Buffering: no`. */
export function sseResponseHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const out = downstreamResponseHeaders(headers);
  out['x-accel-buffering'] = 'no';
  return out;
}

/** The client's `Accept-Encoding` is replaced: a compressing backend would hold events back. */
export function sseDropSet(dropHeaders: ReadonlySet<string>): ReadonlySet<string> {
  return new Set([...dropHeaders, 'accept-encoding']);
}

/** A writable relaying into `res`, with backpressure, until `detach()`; then it ignores writes. */
export function relayTo(res: ServerResponse): { sink: Writable; detach(): void } {
  let detached = false;
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (detached || res.write(chunk)) cb();
      else res.once('drain', () => cb());
    },
    final(cb) {
      if (!detached) res.end();
      cb();
    },
    // undici destroys the sink after a normal end too (no error): only an error cuts the response.
    destroy(err, cb) {
      if (err && !detached) res.destroy(err);
      cb(err);
    },
  });
  return { sink, detach: () => void (detached = true) };
}

/** The endpoint of an `isSSE` route. */
export function sseEndpoint(route: CompiledRoute, options: SseOptions): Step {
  const { upstream, headersTimeoutMs, events, streams } = options;
  const { origin } = upstream;
  const dropHeaders = sseDropSet(options.dropHeaders);
  const template = route.path;
  const buildPath = route.buildPath;
  const method = route.method as Dispatcher.HttpMethod;

  return (ex) =>
    new Promise<void>((resolve) => {
      const { req, res } = ex;
      req.socket.setNoDelay(true);
      const abort = new AbortController();
      // Set when the gateway ended the stream itself (draining): the abort that follows is ours.
      let endedByGateway = false;
      // Set when the client left: the error that follows is its departure, not the backend's.
      let clientLeft = false;
      // A client that leaves closes the backend stream at once.
      const onClose = () => {
        if (res.writableFinished) return;
        clientLeft = true;
        abort.abort();
      };
      res.once('close', onClose);
      const started = performance.now();
      const headers = upstreamRequestHeaders(
        { req, requestId: ex.requestId, hostHeader: origin.hostHeader, claimHeaders: ex.claimHeaders },
        dropHeaders,
      );
      headers.push('accept-encoding', 'identity');
      upstream.streamPool.stream(
        {
          path: appendQuery(buildPath(ex.params), template, ex.rawQuery),
          method: req.method === 'HEAD' ? 'HEAD' : method,
          headers,
          body: upstreamBody(ex),
          signal: abort.signal,
          headersTimeout: headersTimeoutMs,
          bodyTimeout: 0,
        },
        ({ statusCode, headers: backendHeaders }) => {
          ex.upstreamStatus = statusCode;
          const opened = performance.now();
          events.emit('upstream:response', {
            routeId: route.id,
            origin: origin.key,
            call: 'backend',
            status: statusCode,
            durationMs: opened - started,
          });
          ex.onResponseStart?.();
          res.writeHead(statusCode, sseResponseHeaders(backendHeaders));
          res.flushHeaders();
          // A 2xx head starts the stream; anything else is an ordinary (error) answer.
          if (statusCode >= 300) return res;
          events.emit('stream:open', { kind: 'sse', routeId: route.id });
          const relay = relayTo(res);
          const unregister = streams?.add(() => {
            if (res.writableEnded || res.destroyed) return;
            endedByGateway = true;
            relay.detach();
            res.end();
            abort.abort();
          });
          res.once('close', () => {
            unregister?.();
            events.emit('stream:close', { kind: 'sse', routeId: route.id, durationMs: performance.now() - opened });
          });
          return relay.sink;
        },
        (err) => {
          res.removeListener('close', onClose);
          if (err && !endedByGateway) answerUpstreamFailure(ex, err, origin.key, events, clientLeft);
          resolve();
        },
      );
    });
}
