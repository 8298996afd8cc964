/**
 * Limits that protect the gateway from clients (the values follow nginx and
 * Node defaults):
 * - request head size (`limits.maxHeaderBytes`, Node's `maxHeaderSize`): 431;
 * - complete request head within `timeouts.clientHeaderSec` (Node's `headersTimeout`): 408;
 * - a route's request body size and the client's silence while sending it: a layer of the
 *   route's pipeline (layers/body-limit.ts);
 * - idle keep-alive connections closed after `timeouts.keepAliveSec` (72 s by default, above
 *   the 60 s idle timeout of common load balancers, so that they close first and never send a
 *   request on a connection we are closing).
 * Error bodies are the gateway's JSON (send-error.ts), also for errors Node detects itself.
 */
import type { IncomingMessage, Server, ServerOptions } from 'node:http';
import type { Duplex } from 'node:stream';
import type { GatewaySettings } from '../config/schema.js';
import { errorResponse } from '../response/send-error.js';
import type { ErrorCode } from '../response/errors.js';
import { afterAnswersBefore, sendOnSocket } from './socket-response.js';
import type { Logger } from '../observability/logger.js';
import { requestIdFor } from '../observability/request-id.js';
import { configureWriteTimeout } from './write-timeout.js';

type Limits = Pick<GatewaySettings, 'limits' | 'timeouts'> &
  Partial<Pick<GatewaySettings, 'readTimeoutSec' | 'writeTimeoutSec'>>;

/** `createServer` options from the configuration the process starts with. */
export function serverOptions(settings: Limits): ServerOptions {
  const { headersTimeout, requestTimeout } = readTimeouts(settings);
  return {
    keepAliveTimeout: settings.timeouts.keepAliveSec * 1000,
    headersTimeout,
    // Node enforces headersTimeout on this tick; it cannot change after creation.
    connectionsCheckingInterval: Math.min(5_000, Math.max(100, Math.floor(headersTimeout / 4))),
    // The whole-request limit would cut slow but steady uploads, so it applies only when
    // `readTimeoutSec` asks for it; body silence is limited in every case.
    requestTimeout,
    maxHeaderSize: settings.limits.maxHeaderBytes,
  };
}

/** Node refuses a head deadline later than the whole-request deadline: the earlier one wins. */
function readTimeouts(settings: Limits): { headersTimeout: number; requestTimeout: number } {
  const requestTimeout = (settings.readTimeoutSec ?? 0) * 1000;
  const header = settings.timeouts.clientHeaderSec * 1000;
  return { headersTimeout: requestTimeout > 0 ? Math.min(header, requestTimeout) : header, requestTimeout };
}

/**
 * Applies the limits of a configuration to the server: once after creation (the write-stall
 * watch cannot be a creation option), then on every reload (new connections).
 */
export function applyServerLimits(server: Server, settings: Limits): void {
  const { headersTimeout, requestTimeout } = readTimeouts(settings);
  server.keepAliveTimeout = settings.timeouts.keepAliveSec * 1000;
  server.headersTimeout = headersTimeout;
  server.requestTimeout = requestTimeout;
  configureWriteTimeout(server, (settings.writeTimeoutSec ?? 0) * 1000);
  // Read by Node for every new connection's parser.
  (server as Server & { maxHeaderSize?: number }).maxHeaderSize = settings.limits.maxHeaderBytes;
}

const CLIENT_ERRORS: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: 'GW_HEADERS_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'GW_CLIENT_TIMEOUT',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'GW_BODY_TOO_LARGE',
};

/** Marks a connection whose parse error is already being answered. */
const HANDLED = Symbol('portico.clientErrorHandled');

/**
 * The server's `clientError` listener: errors Node finds outside a request it could hand over
 * (head too large, head too slow, malformed HTTP) answered in the gateway's JSON shape, then closed.
 * The head was not parsed, so the client's X-Request-ID is unknown: the answer carries a new one
 * (docs/design-decisions.md: every response carries X-Request-ID), also logged.
 *
 * A parse error on a connection never takes an answer away from a request before it: complete
 * requests already received (pipelined, or one still waiting for its backend) get their answers
 * first, whole and in order, and only then the error answer and the close. Bytes after a request
 * that closes the connection (`Connection: close`, HTTP/1.0) are dropped without an answer: that
 * request's own answer closes the connection.
 */
export function clientErrorHandler(logger: Logger): (err: Error & { code?: string }, socket: Duplex) => void {
  return (err, socket) => {
    const s = socket as Duplex & { [HANDLED]?: true; parser?: { incoming?: IncomingMessage | null } | null };
    // Node reports the error again for every later read of the same connection: answer once.
    if (s[HANDLED] === true) return;
    s[HANDLED] = true;
    const code = CLIENT_ERRORS[err.code ?? ''] ?? 'GW_BAD_REQUEST';
    const log = (reqId: string | undefined, answered: ErrorCode | undefined) =>
      logger.debug({ reqId, err: { code: err.code, message: err.message }, answered }, 'client error');
    if (err.code === 'ECONNRESET') {
      socket.destroy();
      return log(undefined, undefined);
    }
    if (err.code === 'HPE_CLOSED_CONNECTION') return log(undefined, undefined);
    // A request whose own body broke off is the one the error answers; a complete one is not.
    const incoming = s.parser?.incoming ?? undefined;
    const broken = incoming !== undefined && !incoming.complete ? incoming : undefined;
    afterAnswersBefore(socket, broken, (current) => {
      // Closing already: the last answer asked for the close (Connection: close), or the client left.
      if (socket.destroyed || socket.writableEnded) return log(undefined, undefined);
      // The broken request's answer has begun: it cannot be replaced, only cut.
      if (current?.headersSent === true || !socket.writable) {
        socket.destroy();
        return log(undefined, undefined);
      }
      const reqId = requestIdFor(undefined);
      const r = errorResponse(code, { 'x-request-id': reqId });
      sendOnSocket(socket, r.status, r.headers, r.body);
      log(reqId, code);
    });
  };
}
