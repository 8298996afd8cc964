/**
 * The one entry point of every request, whichever way it came: HTTP/1.1, HTTP/2, or a WebSocket
 * handshake (./upgrade.ts hands it over with a response bound to its socket). Request id,
 * protocol checks, the gateway's own endpoints, route lookup, then the route's pipeline, and one
 * report when the answer is done. The route table is read through `current()` on every request,
 * so a reload swaps one reference and in-flight requests finish on the table they started with.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Match, RouteTable } from '../router/route-table.js';
import type { ErrorCode } from '../response/errors.js';
import type { Exchange, Step, UpgradeRequest } from '../pipeline/types.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { requestIdFor } from '../observability/request-id.js';
import { createExchange } from '../pipeline/exchange.js';
import { sendError } from '../response/send-error.js';
import { answerAsGrpc, isGrpcContentType } from '../response/grpc-status.js';
import { sendHealth, sendReady } from '../ops/health.js';
import type { CorsPolicy } from '../layers/cors.js';
import { traceOf, type Tracer } from '../observability/trace-context.js';
import { answerCompleted } from '../response/answer-completed.js';
import { stampRequestId } from './gateway-response.js';
import { reportRequestEnd, reportResponseEnd } from './request-end.js';
import { GatewayH2Request } from './http2-request.js';
import { mayBeRefused, onRefusedConnection, protocolRefusal, refuseConnection } from './protocol-checks.js';

/** What the gateway answers when a path finds no route to run. */
const MATCH_ERRORS = {
  'not-found': 'GW_ROUTE_NOT_FOUND',
  'method-not-allowed': 'GW_METHOD_NOT_ALLOWED',
  'bad-parameter': 'GW_PATH_PARAM_INVALID',
  'bad-path': 'GW_PATH_REST_INVALID',
  'host-not-found': 'GW_HOST_NOT_FOUND',
  misdirected: 'GW_MISDIRECTED_REQUEST',
} as const satisfies Record<Exclude<Match['kind'], 'found'>, ErrorCode>;

const MISDIRECTED: Match = Object.freeze({ kind: 'misdirected' });

/** Status reported for an upgrade whose client left before it was answered (nginx's 499). */
const CLIENT_CLOSED = 499;

export interface RequestHandlerDeps {
  current(): RouteTable;
  readonly events: EventBus;
  readonly logger: Logger;
  /** The gateway's tracer: each request's trace is made by its settings. */
  readonly tracer: Tracer;
  /** True from the start of a drain: /ready answers 503 and every answer ends its connection. */
  isDraining(): boolean;
  /** False once a draining gateway stopped accepting: a tunnel opened then would outlive the drain. */
  acceptsTunnels?(): boolean;
  /** True while `redis.required` is set and Redis is not connected: GET /ready answers 503. */
  isWaitingForRedis?(): boolean;
  /** Answers GET /metrics; undefined while metrics are not wired. */
  readonly metrics?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Counts requests in flight, for graceful shutdown. */
  readonly inFlight: { count: number };
  /** The CORS policy of the current configuration (preflights are answered here, layers/cors.ts). */
  readonly cors?: () => CorsPolicy | undefined;
  /**
   * Set on a TLS listener only: true when the connection's certificate is not the one for the
   * request's host (server/tls-listener.ts), answered 421 before routing.
   */
  readonly misdirected?: (req: IncomingMessage) => boolean;
}

/**
 * Serves one request. `upgrade` is set for a WebSocket handshake on a WebSocket route, whose
 * `res` writes onto the handed-over socket; Node calls the handler with `(req, res)` alone.
 */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse, upgrade?: UpgradeRequest) => void;

export function createRequestHandler(deps: RequestHandlerDeps): RequestHandler {
  const { logger, tracer } = deps;
  return (req, res, upgrade) => {
    const started = performance.now();
    tracer.bind(req);
    const requestId = requestIdFor(req.headers['x-request-id']);
    stampRequestId(res, requestId);
    if (deps.isDraining()) endsConnection(req, res);
    // Framing and Host problems are refused before anything reads the head for routing or auth.
    if (onRefusedConnection(req)) return void req.resume();
    if (mayBeRefused(req) && refusedForProtocol(deps, req, res, started, requestId)) return;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    if (ownEndpoint(deps, req, res, method, path, started, requestId)) return;

    const match =
      deps.misdirected !== undefined && deps.misdirected(req)
        ? MISDIRECTED
        : deps.current().match(method, path, req.headers.host);
    const ex: Exchange | undefined =
      match.kind === 'found'
        ? createExchange(match.entry.route, req, res, upgrade, requestId, match.params, q < 0 ? '' : url.slice(q + 1))
        : undefined;
    const errorCode = match.kind === 'found' ? undefined : MATCH_ERRORS[match.kind];
    deps.inFlight.count++;
    res.once('close', () => answered(deps, req, res, upgrade, started, requestId, method, path, ex, errorCode));

    if (match.kind !== 'found' || ex === undefined) {
      req.resume();
      // A gRPC client reads a status, not a JSON body: UNIMPLEMENTED for a method no route serves.
      if (req.httpVersionMajor === 2 && isGrpcContentType(req.headers['content-type'])) answerAsGrpc(res);
      return match.kind === 'method-not-allowed'
        ? sendError(res, 'GW_METHOD_NOT_ALLOWED', { allow: match.allow })
        : sendError(res, errorCode ?? 'GW_ROUTE_NOT_FOUND');
    }
    // A tunnel opened now would outlive the drain; a plain request is still served.
    if (upgrade !== undefined && !(deps.acceptsTunnels?.() ?? !deps.isDraining())) {
      ex.errorCode = 'GW_GATEWAY_DRAINING';
      return sendError(res, 'GW_GATEWAY_DRAINING');
    }
    runStep(match.entry.run, ex).catch((err: unknown) => {
      // A bug, not a backend failure: log it with the request id, answer without internals.
      logger.error({ reqId: requestId, route: ex.route.id, err }, 'unhandled error in pipeline');
      ex.errorCode = 'GW_INTERNAL';
      if (upgrade?.switched === true) upgrade.socket.destroy();
      else sendError(res, 'GW_INTERNAL');
    });
  };
}

/**
 * Tells the client that the connection ends with this answer: `Connection: close`, or on HTTP/2
 * a GOAWAY that lets this stream (and any before it) finish and refuses the ones after it, which
 * the client may then send elsewhere (RFC 9113 6.8).
 */
function endsConnection(req: IncomingMessage, res: ServerResponse): void {
  if (req instanceof GatewayH2Request) req.stream.session?.close();
  else res.setHeader('connection', 'close');
}

/**
 * The end of a request that reached routing: the endpoint's hook, the in-flight count, and the
 * one report. An upgrade is reported when the tunnel opens (101), or with the answer that
 * refused it (499 when the client left before any).
 */
function answered(
  deps: RequestHandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  upgrade: UpgradeRequest | undefined,
  started: number,
  requestId: string,
  method: string,
  path: string,
  ex: Exchange | undefined,
  errorCode: ErrorCode | undefined,
): void {
  ex?.onClose?.();
  deps.inFlight.count--;
  const { events, tracer } = deps;
  const trace = tracer.isRecording() ? traceOf(req) : undefined;
  const code = ex?.errorCode ?? errorCode;
  if (upgrade === undefined)
    return reportResponseEnd(events, res, started, requestId, method, path, ex?.route.id, code, trace);
  const status = upgrade.switched ? 101 : res.headersSent ? res.statusCode : CLIENT_CLOSED;
  const aborted = !upgrade.switched && !answerCompleted(res);
  reportRequestEnd(events, started, requestId, method, path, ex?.route.id, status, aborted, code, trace);
}

/** Refuses a request whose framing or Host the gateway does not accept; false when it is fine. */
function refusedForProtocol(
  deps: RequestHandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  started: number,
  requestId: string,
): boolean {
  const refusal = protocolRefusal(req);
  if (refusal === undefined) return false;
  const method = req.method ?? '';
  const path = pathOf(req.url ?? '');
  res.once('close', () => reportResponseEnd(deps.events, res, started, requestId, method, path, undefined, refusal));
  req.resume();
  // An HTTP/2 stream is refused alone: its framing is the connection's, not the client's.
  if (req instanceof GatewayH2Request) sendError(res, refusal);
  else {
    refuseConnection(req);
    sendError(res, refusal, { connection: 'close' });
  }
  return true;
}

/**
 * Answers the gateway's own endpoints (/health, /ready, /metrics, CORS preflights); false when
 * the request is for a route.
 */
function ownEndpoint(
  deps: RequestHandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  path: string,
  started: number,
  requestId: string,
): boolean {
  if (method === 'GET' || method === 'HEAD') {
    if (path === '/health') return (sendHealth(res), true);
    if (path === '/ready') return (sendReady(res, deps.isDraining(), deps.isWaitingForRedis?.()), true);
    if (path === '/metrics' && deps.metrics) return (deps.metrics(req, res), true);
    return false;
  }
  if (method !== 'OPTIONS' || deps.cors === undefined) return false;
  // A CORS preflight for a path some route serves is the gateway's to answer, never forwarded.
  const cors = deps.cors();
  const wanted = req.headers['access-control-request-method'];
  const target =
    cors !== undefined && cors.isPreflight(req) && typeof wanted === 'string'
      ? deps.current().match(wanted, path, req.headers.host)
      : undefined;
  if (cors === undefined || target === undefined || target.kind === 'not-found' || target.kind === 'host-not-found')
    return false;
  // Answered here, but logged and counted like any request, under the route it asks about.
  const route = target.kind === 'found' ? target.entry.route : undefined;
  // A client the route's address rules refuse learns nothing of its CORS policy either.
  const refused = route?.refusesClient?.(req) === true ? 'GW_IP_FORBIDDEN' : undefined;
  res.once('close', () => reportResponseEnd(deps.events, res, started, requestId, method, path, route?.id, refused));
  if (refused !== undefined) sendError(res, refused);
  else cors.preflight(req, res);
  return true;
}

/** The path of a request target, without its query (which may carry a token). */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/**
 * Runs a route's pipeline; a layer that throws before its first `await` (several answer without
 * one) ends in the same rejected promise as one that throws after it.
 */
function runStep(run: Step, ex: Exchange): Promise<void> {
  try {
    return run(ex);
  } catch (err) {
    return Promise.reject(err);
  }
}
