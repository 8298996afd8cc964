/**
 * The endpoint of standard routes: the request is streamed to the backend and the answer streamed
 * back, never buffered. undici's `stream()` writes the backend body straight into the client
 * response (the fastest path undici offers: no intermediate Readable).
 */
import type { Dispatcher } from 'undici';
import type { Exchange, Step } from '../pipeline/step.js';
import type { CompiledRoute } from '../config/compile.js';
import type { Upstream } from '../upstream/upstream.js';
import { appendQuery } from '../upstream/target-url.js';
import { downstreamResponseHeaders, upstreamRequestHeaders } from '../upstream/forward-headers.js';
import { sendError } from '../response/send-error.js';
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

/** True when the client request carries a body that must be streamed on. */
export function hasRequestBody(ex: Exchange): boolean {
  const h = ex.req.headers;
  return h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0');
}

export function forwardEndpoint(route: CompiledRoute, options: ForwardOptions): Step {
  const { upstream, dropHeaders, headersTimeoutMs, bodyTimeoutMs, events } = options;
  const { pool, origin } = upstream;
  const template = route.path;
  const buildPath = route.buildPath;
  const method = route.method as Dispatcher.HttpMethod;

  const load = upstream.load;

  return (ex) =>
    new Promise<void>((resolve) => {
      const { req, res } = ex;
      const abort = new AbortController();
      // A client that leaves must release the backend connection at once (issue #8).
      const onClose = () => {
        if (!res.writableFinished) abort.abort();
      };
      res.once('close', onClose);
      // undici starts headersTimeout when the request gets a connection. With every pooled
      // connection busy the request first waits in the queue, and undici acts on an abort only
      // once the request is dispatched: so the gateway answers the 504 itself at the deadline
      // (backendSec after arrival, DECISIONS.md) and the queued request is dropped at dispatch.
      let settled = false;
      const settle = () => {
        settled = true;
        resolve();
      };
      let deadline: NodeJS.Timeout | undefined;
      if (load.inFlight >= load.connections) {
        deadline = setTimeout(() => {
          abort.abort();
          if (ex.upstreamStatus !== undefined || settled) return;
          ex.upstreamFailure = 'timeout';
          ex.errorCode = 'GW_UPSTREAM_TIMEOUT';
          events.emit('upstream:error', { requestId: ex.requestId, routeId: route.id, origin: origin.key, kind: 'timeout', error: new Error('no connection and no response headers within backendSec') });
          sendError(res, 'GW_UPSTREAM_TIMEOUT');
          settle();
        }, headersTimeoutMs);
      }
      load.inFlight++;
      const started = performance.now();
      pool.stream(
        {
          path: appendQuery(buildPath(ex.params), template, ex.rawQuery),
          method: req.method === 'HEAD' ? 'HEAD' : method,
          headers: upstreamRequestHeaders({ req, requestId: ex.requestId, hostHeader: origin.hostHeader, claimHeaders: ex.claimHeaders }, dropHeaders),
          body: hasRequestBody(ex) ? req : null,
          signal: abort.signal,
          headersTimeout: headersTimeoutMs,
          bodyTimeout: bodyTimeoutMs,
        },
        ({ statusCode, headers }) => {
          if (deadline !== undefined) clearTimeout(deadline);
          ex.upstreamStatus = statusCode;
          events.emit('upstream:response', { routeId: route.id, origin: origin.key, call: 'backend', status: statusCode, durationMs: performance.now() - started });
          res.writeHead(statusCode, downstreamResponseHeaders(headers));
          return res;
        },
        (err) => {
          load.inFlight--;
          if (deadline !== undefined) clearTimeout(deadline);
          res.removeListener('close', onClose);
          if (settled) return;
          if (err) answerUpstreamFailure(ex, err, origin.key, events);
          settle();
        },
      );
    });
}
