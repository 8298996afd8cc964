/**
 * The request entry point: request id, the gateway's own endpoints, route lookup, then the
 * route's pipeline. The route table is read through `current()` on every request, so a reload
 * swaps one reference and in-flight requests finish on the table they started with.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Match, RouteTable } from '../router/route-table.js';
import type { ErrorCode } from '../response/errors.js';
import type { Exchange, Step } from '../pipeline/types.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { requestIdFor } from '../observability/request-id.js';
import { errorResponse, sendError } from '../response/send-error.js';
import { sendOnSocket } from './socket-response.js';
import type { Duplex } from 'node:stream';
import { sendHealth, sendReady } from '../ops/health.js';
import type { CorsPolicy } from '../guards/cors.js';
import { traceOf, type Tracer } from '../observability/trace-context.js';
import { stampRequestId } from './gateway-response.js';
import { reportResponseEnd } from './request-end.js';
import { GatewayH2Request } from './http2-request.js';

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
  /** The gateway's tracer: each request's trace is made by its settings. */
  readonly tracer: Tracer;
  isDraining(): boolean;
  /** True while `redis.required` is set and Redis is not connected: GET /ready answers 503. */
  isWaitingForRedis?(): boolean;
  /** Answers GET /metrics; undefined while metrics are not wired. */
  readonly metrics?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Counts requests in flight, for graceful shutdown. */
  readonly inFlight: { count: number };
  /** The CORS policy of the current configuration (preflights are answered here, guards/cors.ts). */
  readonly cors?: () => CorsPolicy | undefined;
}

export function createRequestHandler(deps: RequestHandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { events, logger, inFlight, tracer } = deps;
  return (req, res) => {
    const started = performance.now();
    tracer.bind(req);
    const requestId = requestIdFor(req.headers['x-request-id']);
    stampRequestId(res, requestId);
    if (deps.isDraining()) res.setHeader('connection', 'close');
    // Framing and Host problems are refused before anything reads the head for routing or auth.
    // Node has parsed what followed a refused request by the refused request's framing, which the
    // refusal says not to trust: those requests are never served, the connection closes first.
    if ((req.socket as RefusedSocket)[FRAMING_REFUSED] === true) return void req.resume();
    if (
      req.httpVersionMajor !== 1 ||
      req.headers['transfer-encoding'] !== undefined ||
      req.rawHeaders.length >= MAX_HEADER_ENTRIES ||
      !hasOneValidHost(req)
    ) {
      const refusal = protocolRefusal(req);
      if (refusal !== undefined) {
        res.once('close', () =>
          reportResponseEnd(
            events,
            res,
            started,
            requestId,
            req.method ?? '',
            req.url ?? '',
            undefined,
            refusal,
            undefined,
          ),
        );
        req.resume();
        // An HTTP/2 stream is refused alone: its framing is the connection's, not the client's.
        if (req instanceof GatewayH2Request) return sendError(res, refusal);
        (req.socket as RefusedSocket)[FRAMING_REFUSED] = true;
        return sendError(res, refusal, { connection: 'close' });
      }
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';

    if (method === 'GET' || method === 'HEAD') {
      if (path === '/health') return sendHealth(res);
      if (path === '/ready') return sendReady(res, deps.isDraining(), deps.isWaitingForRedis?.());
      if (path === '/metrics' && deps.metrics) return deps.metrics(req, res);
    } else if (method === 'OPTIONS' && deps.cors !== undefined) {
      // A CORS preflight for a path some route serves is the gateway's to answer, never forwarded.
      const cors = deps.cors();
      const wanted = req.headers['access-control-request-method'];
      const target =
        cors !== undefined && cors.isPreflight(req) && typeof wanted === 'string'
          ? deps.current().match(wanted, path)
          : undefined;
      if (cors !== undefined && target !== undefined && target.kind !== 'not-found') {
        // Answered here, but logged and counted like any request, under the route it asks about.
        const routeId = target.kind === 'found' ? target.entry.route.id : undefined;
        res.once('close', () =>
          reportResponseEnd(events, res, started, requestId, method, path, routeId, undefined, undefined),
        );
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
            claims: undefined,
            upstreamStatus: undefined,
            upstreamFailure: undefined,
            body: undefined,
            errorCode: undefined,
            onClose: undefined,
            onResponseStart: undefined,
          }
        : undefined;
    const errorCode = match.kind === 'found' ? undefined : MATCH_ERRORS[match.kind];
    inFlight.count++;
    res.once('close', () => {
      ex?.onClose?.();
      inFlight.count--;
      reportResponseEnd(
        events,
        res,
        started,
        requestId,
        method,
        path,
        ex?.route.id,
        ex?.errorCode ?? errorCode,
        tracer.isRecording() ? traceOf(req) : undefined,
      );
    });

    if (match.kind !== 'found' || ex === undefined) {
      req.resume();
      return match.kind === 'method-not-allowed'
        ? sendError(res, 'GW_METHOD_NOT_ALLOWED', { allow: match.allow })
        : sendError(res, errorCode ?? 'GW_ROUTE_NOT_FOUND');
    }
    const exchange = ex;
    runStep(match.entry.run, exchange).catch((err: unknown) => {
      // A bug, not a backend failure: log it with the request id, answer without internals.
      logger.error({ reqId: requestId, route: exchange.route.id, err }, 'unhandled error in pipeline');
      exchange.errorCode = 'GW_INTERNAL';
      sendError(res, 'GW_INTERNAL');
    });
  };
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

/** Marks a connection whose framing the gateway refused: it serves no further request. */
const FRAMING_REFUSED = Symbol('portico.framingRefused');
type RefusedSocket = IncomingMessage['socket'] & { [FRAMING_REFUSED]?: true };

/**
 * Node's parser hands over the fields of a head in batches and stops adding batches to
 * `rawHeaders` past 2,000 entries, and `req.headers` holds only the first 2,000 entries
 * (1,000 fields), yet the body is framed by every field: a request this long may have a
 * Content-Length or Transfer-Encoding the gateway cannot see, so it is refused.
 */
const MAX_HEADER_ENTRIES = 2_000;

/** RFC 3986 `host [ ":" port ]`: an IP literal, or a registered name or IPv4 address. */
const VALID_HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::[0-9]*)?$/;

/**
 * True when the request has exactly one Host field with a valid value (RFC 9112 3.2: anything
 * else is a 400), or none on HTTP/1.0. X-Forwarded-Host carries it to the backend, where a
 * forged path or userinfo in it could end up in the URLs the backend builds.
 */
function hasOneValidHost(req: IncomingMessage): boolean {
  const host = req.headers.host;
  if (host === undefined) return req.httpVersionMinor === 0;
  if (!VALID_HOST.test(host)) return false;
  // Node keeps the first of several Host fields: only the raw list shows a second.
  const raw = req.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host' && ++seen > 1) return false;
  }
  return true;
}

/**
 * What a proxy must not forward (RFC 9112 6.1, 6.3; nginx refuses the same): a version other
 * than HTTP/1.x, Transfer-Encoding on HTTP/1.0 (its framing is faulty by definition), a transfer
 * coding other than exactly `chunked` (the body would go on still coded, unknown to the
 * backend), more header fields than Node keeps, a Host missing, repeated or malformed.
 * The connection closes after the answer: the body that follows is not read.
 */
function protocolRefusal(req: IncomingMessage): ErrorCode | undefined {
  // HTTP/2 frames the body itself; its host (`:authority`, set as Host by server/http2-request.ts)
  // is required and checked as HTTP/1.1's is.
  if (req instanceof GatewayH2Request)
    return req.headers.host !== undefined && hasOneValidHost(req) ? undefined : 'GW_BAD_HOST';
  if (req.httpVersionMajor !== 1) return 'GW_HTTP_VERSION_UNSUPPORTED';
  if (req.rawHeaders.length >= MAX_HEADER_ENTRIES) return 'GW_HEADERS_TOO_LARGE';
  const te = req.headers['transfer-encoding'];
  if (te !== undefined) {
    if (req.httpVersionMinor === 0) return 'GW_BAD_REQUEST';
    if (te.trim().toLowerCase() !== 'chunked') return 'GW_TRANSFER_CODING_UNSUPPORTED';
  }
  if (!hasOneValidHost(req)) return 'GW_BAD_HOST';
  return undefined;
}

/** Methods some route can have: the `Allow` of the refusal of CONNECT. */
const ROUTE_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

/**
 * The server's `connect` listener. The gateway is no forward proxy and opens no tunnels: a
 * CONNECT request gets a JSON 405 and the connection closes (without a listener Node would drop
 * the connection without a word).
 */
export function sendConnectError(req: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  const r = errorResponse('GW_METHOD_UNSUPPORTED', {
    'x-request-id': requestIdFor(req.headers['x-request-id']),
    allow: ROUTE_METHODS,
  });
  sendOnSocket(socket, r.status, r.headers, r.body);
}
