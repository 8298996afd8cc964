/**
 * A route's WebSocket handshake, sent to its backend. It is a call of the route like any other
 * (the pool it goes out on and its count, the backend path and headers, the 'upstream:response'
 * report, one failure path, the reaction to a client that leaves), and the caller says what an
 * answer becomes: a 101 with the backend's socket, or any other answer.
 *
 * It is sent with node:http on a connection of its own, not on an undici pool: an upgrade must be
 * HTTP/1.1 end to end, and undici sends a WebSocket upgrade on an HTTP/2 connection as an
 * extended CONNECT (RFC 8441), which the client's handshake cannot be relayed to. The call stays
 * counted on its pool until the client's connection closes: the tunnel is the call's answer.
 *
 *   no connection, a reset       502 JSON (504 when no head came within `headersTimeoutMs`)
 *   the client leaves            the attempt is dropped, nothing is counted against the backend
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import type { Exchange } from '../../pipeline/types.js';
import { sendError } from '../../response/send-error.js';
import type { BackendPool } from '../types.js';
import { callEnded, callOutcome } from './pool-count.js';
import { callStarted } from './pool-use.js';
import { backendHeaders, backendPath, reportResponse, type RouteCall } from './route-call.js';
import { recordFailure } from './failure.js';

/** What the endpoint does with the backend's answer, once the call recorded it. */
export interface UpgradeAnswer {
  /** Why a 101 is no valid answer to this client's handshake, or undefined when it is one. */
  problem(bres: IncomingMessage): string | undefined;
  /** A valid 101, and the backend's socket. */
  switched(bres: IncomingMessage, backend: Duplex, backendHead: Buffer): void;
  /** Any other answer, to relay as it is. */
  answered(bres: IncomingMessage): void;
}

/** The flat header list of the upgrade request: a backend call's, plus the upgrade itself. */
export function backendUpgradeHeaders(
  call: Pick<RouteCall, 'route' | 'upstream' | 'dropHeaders' | 'identityEncoding'>,
  ex: Pick<Exchange, 'req' | 'requestId' | 'claimHeaders' | 'claims' | 'params'> &
    Partial<Pick<Exchange, 'upstreamEdits'>>,
  hostHeader = call.upstream.origin.hostHeader,
): string[] {
  const headers = backendHeaders(call, ex, hostHeader);
  // Connection and Upgrade are hop-by-hop, so the forwarding rules dropped them: this hop upgrades too.
  headers.push('connection', 'Upgrade', 'upgrade', 'websocket');
  return headers;
}

/**
 * Sends the handshake of `ex` (an upgrade whose client is still there) to the route's backend;
 * resolves once the outcome is on the exchange, where the circuit layer reads it.
 */
export function upgradeCall(call: RouteCall, ex: Exchange, answer: UpgradeAnswer): Promise<void> {
  const { socket } = ex.upgrade!;
  const started = performance.now();
  const pool = callStarted(call.upstream, true);
  endsWithClient(socket, pool);
  return new Promise<void>((resolve) => {
    let settled = false;
    const done = () => {
      if (settled) return false;
      settled = true;
      socket.removeListener('close', onClientClose);
      resolve();
      return true;
    };
    const breq = dial(call, ex, pool);
    // The client gave up during the handshake: drop the backend attempt, count nothing.
    const onClientClose = () => {
      if (!done()) return;
      ex.upstreamFailure = 'aborted';
      breq.destroy();
    };
    socket.once('close', onClientClose);
    breq.on('error', (err) => {
      if (settled) return;
      // The target failed the handshake unless the client left first.
      if (!socket.destroyed) callOutcome(pool, true);
      const code = recordFailure(ex, err, call.upstream.origin.key, call.events, false, socket.destroyed);
      if (code !== undefined) {
        ex.errorCode = code;
        sendError(ex.res, code);
      }
      done();
    });
    breq.on('response', (bres) => {
      if (!done()) return void bres.destroy();
      const status = bres.statusCode ?? 502;
      callOutcome(pool, status >= 500);
      ex.upstreamStatus = status;
      reportResponse(call, 'websocket', status, started);
      answer.answered(bres);
    });
    breq.on('upgrade', (bres, backend, backendHead) => {
      if (settled || socket.destroyed) return void backend.destroy();
      const problem = answer.problem(bres);
      if (problem !== undefined) {
        backend.destroy();
        refuseAnswer(call, ex, pool, problem);
        done();
        return;
      }
      callOutcome(pool, false);
      ex.upstreamStatus = bres.statusCode ?? 101;
      done();
      reportResponse(call, 'websocket', 101, started);
      answer.switched(bres, backend, backendHead);
    });
    breq.end();
  });
}

/** The pool a client socket's upgrade call is counted on, for the shared `close` listener below. */
const CALL_POOL = Symbol('portico.upgradePool');

interface CountedSocket extends Duplex {
  [CALL_POOL]?: BackendPool;
}

/**
 * Keeps the call counted on its pool until the client's connection closes. One listener shared
 * by every upgrade, which finds the pool on the socket: a closure per call would cost every open
 * tunnel a function and its context (and one made in `upgradeCall` would hold the exchange).
 */
function endsWithClient(socket: CountedSocket, pool: BackendPool): void {
  socket[CALL_POOL] = pool;
  socket.on('close', releaseCallPool);
}

function releaseCallPool(this: CountedSocket): void {
  callEnded(this[CALL_POOL]!);
}

/**
 * A 101 that is no valid handshake answer: a failure of the target, answered 502: the client
 * must not get a raw byte pipe to something that does not speak WebSocket.
 */
function refuseAnswer(call: RouteCall, ex: Exchange, pool: BackendPool, problem: string): void {
  callOutcome(pool, true);
  ex.upstreamFailure = 'other';
  call.events.emit('upstream:error', {
    requestId: ex.requestId,
    routeId: call.route.id,
    origin: call.upstream.origin.key,
    kind: 'protocol',
    error: new Error(problem),
  });
  ex.errorCode = 'GW_UPSTREAM_BAD_UPGRADE';
  sendError(ex.res, 'GW_UPSTREAM_BAD_UPGRADE');
}

/** The handshake request to the target the pool stands for (a named upstream's pick, or the service). */
function dial(call: RouteCall, ex: Exchange, pool: BackendPool): ClientRequest {
  const target = pool.origin;
  const tls = call.upstream.tlsConnect;
  const timeoutMs = call.headersTimeoutMs;
  const breq = (target.protocol === 'https:' ? httpsRequest : httpRequest)({
    host: target.hostname,
    port: target.port,
    method: 'GET',
    path: backendPath(call.route, ex),
    headers: backendUpgradeHeaders(call, ex, target.hostHeader),
    setHost: false,
    agent: false,
    // The upstream's CAs, verification and client certificate, as its pools connect.
    ...(tls === undefined
      ? {}
      : { ca: tls.ca, rejectUnauthorized: tls.rejectUnauthorized, cert: tls.cert, key: tls.key }),
    // A target resolved from a host name (upstream/dns-targets.ts) is still that name to TLS.
    ...(target.serverName === undefined ? {} : { servername: target.serverName }),
  });
  breq.on('timeout', () => {
    breq.destroy(Object.assign(new Error(`no upgrade answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
  });
  // Until the head, a timer of the call's own rather than the socket's idle timeout: a socket
  // keeps its cleared timer for life, and a 101's socket lives as long as its tunnel. An answer
  // other than 101 keeps the idle timeout while its body comes, as before.
  const timer = setTimeout(() => breq.emit('timeout'), timeoutMs);
  timer.unref();
  const clear = () => clearTimeout(timer);
  breq.once('upgrade', clear);
  breq.once('close', clear);
  breq.once('response', () => {
    clear();
    breq.setTimeout(timeoutMs);
  });
  return breq;
}
