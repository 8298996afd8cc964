/**
 * The request entry point: request id, the gateway's own endpoints, route lookup, then the
 * route's pipeline. The route table is read through `current()` on every request, so a reload
 * swaps one reference and in-flight requests finish on the table they started with.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Match, RouteTable } from '../router/route-table.js';
import type { ErrorCode } from '../response/errors.js';
import type { Exchange } from '../pipeline/step.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { requestIdFor } from '../observability/request-id.js';
import { sendError } from '../response/send-error.js';
import { sendHealth, sendReady } from './health.js';
import type { CorsPolicy } from './cors.js';
import { isRecording, traceOf } from '../observability/trace-context.js';
import { stampRequestId } from './gateway-response.js';

/** What the gateway answers when a path finds no route to run. */
const MATCH_ERRORS = {
  'not-found': 'GW_ROUTE_NOT_FOUND',
  'method-not-allowed': 'GW_METHOD_NOT_ALLOWED',
  'bad-parameter': 'GW_PATH_PARAM_INVALID',
} as const satisfies Record<Exclude<Match['kind'], 'found'>, ErrorCode>;

export interface RequestHandlerDeps {
  current(): RouteTable;
  readonly events: EventBus;
  readonly logger: Logger;
  isDraining(): boolean;
  /** Answers GET /metrics; undefined while metrics are not wired. */
  readonly metrics?: (res: ServerResponse) => void;
  /** Counts requests in flight, for graceful shutdown. */
  readonly inFlight: { count: number };
  /** The CORS policy of the current configuration (preflights are answered here, server/cors.ts). */
  readonly cors?: () => CorsPolicy | undefined;
}

export function createRequestHandler(deps: RequestHandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { events, logger, inFlight } = deps;
  return (req, res) => {
    const started = performance.now();
    const requestId = requestIdFor(req.headers['x-request-id']);
    stampRequestId(res, requestId);
    if (deps.isDraining()) res.setHeader('connection', 'close');
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';

    if (method === 'GET' || method === 'HEAD') {
      if (path === '/health') return sendHealth(res);
      if (path === '/ready') return sendReady(res, deps.isDraining());
      if (path === '/metrics' && deps.metrics) return deps.metrics(res);
    } else if (method === 'OPTIONS' && deps.cors !== undefined) {
      // A CORS preflight for a path some route serves is the gateway's to answer, never forwarded.
      const cors = deps.cors();
      const wanted = req.headers['access-control-request-method'];
      if (cors !== undefined && cors.isPreflight(req) && typeof wanted === 'string' && deps.current().match(wanted, path).kind !== 'not-found') {
        return cors.preflight(req, res);
      }
    }

    const match = deps.current().match(method, path);
    const ex: Exchange | undefined =
      match.kind === 'found'
        ? {
            route: match.entry.route,
            req,
            res,
            requestId,
            params: match.params,
            rawQuery: q < 0 ? '' : url.slice(q + 1),
            claimHeaders: undefined,
            upstreamStatus: undefined,
            upstreamFailure: undefined,
            body: undefined,
            errorCode: undefined,
            onClose: undefined,
          }
        : undefined;
    const errorCode = match.kind === 'found' ? undefined : MATCH_ERRORS[match.kind];
    inFlight.count++;
    res.once('close', () => {
      ex?.onClose?.();
      inFlight.count--;
      events.emit('request:end', {
        requestId,
        method,
        routeId: ex?.route.id,
        path,
        status: res.statusCode,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        aborted: !res.writableFinished,
        errorCode: ex?.errorCode ?? errorCode,
        trace: isRecording() ? traceOf(req) : undefined,
      });
    });

    if (match.kind !== 'found' || ex === undefined) {
      req.resume();
      return match.kind === 'method-not-allowed' ? sendError(res, 'GW_METHOD_NOT_ALLOWED', { allow: match.allow }) : sendError(res, errorCode ?? 'GW_ROUTE_NOT_FOUND');
    }
    const exchange = ex;
    match.entry.run(exchange).catch((err: unknown) => {
      // A bug, not a backend failure: log it with the request id, answer without internals.
      logger.error({ reqId: requestId, route: exchange.route.id, err }, 'unhandled error in pipeline');
      exchange.errorCode = 'GW_INTERNAL';
      sendError(res, 'GW_INTERNAL');
    });
  };
}
