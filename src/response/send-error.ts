import type { ServerResponse } from 'node:http';
import { ERRORS, type ErrorCode } from './errors.js';
import { answersAsGrpc, sendGrpcError } from './grpc-status.js';
import { takeErrorHook } from './error-hooks.js';

/** Pre-serialised bodies: the error path allocates nothing but the response. */
const BODIES = new Map<string, Buffer>(
  Object.entries(ERRORS).map(([code, e]) => [code, Buffer.from(JSON.stringify({ error: e.message, success: false }))]),
);

/**
 * Writes a gateway error in the one JSON shape of docs/design-decisions.md. The only place that turns an
 * error into a body. A response whose headers already went out can only be cut short. On a gRPC
 * call (response/grpc-status.ts) the same error is a gRPC status instead, without a body.
 */
export function sendError(
  res: ServerResponse,
  code: ErrorCode,
  extraHeaders?: Record<string, string | number>,
  message?: string,
  /** Fields after `error` and `success` (e.g. a validation's `errors` list); never `error` or `success`. */
  details?: Readonly<Record<string, unknown>>,
): void {
  if (answersAsGrpc(res)) return sendGrpcError(res, code, extraHeaders, message);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A route's plugins watch its errors (response/error-hooks.ts): they write the answer.
  const hook = takeErrorHook(res);
  if (hook !== undefined) return hook.onGatewayError({ code, extraHeaders, message, details });
  const body =
    message === undefined && details === undefined
      ? BODIES.get(code)!
      : Buffer.from(JSON.stringify({ error: message ?? ERRORS[code].message, success: false, ...details }));
  res.writeHead(ERRORS[code].status, {
    'content-type': 'application/json',
    'content-length': body.length,
    'x-portico-error': code,
    ...extraHeaders,
  });
  res.end(body);
}

/**
 * The same gateway error as a complete response (status, headers with content-length, body), for
 * writers that have no ServerResponse, such as the WebSocket upgrade answering on a raw socket.
 */
export function errorResponse(
  code: ErrorCode,
  extraHeaders?: Record<string, string>,
): { status: number; headers: Record<string, string>; body: Buffer } {
  const body = BODIES.get(code)!;
  return {
    status: ERRORS[code].status,
    headers: {
      'content-type': 'application/json',
      'content-length': String(body.length),
      'x-portico-error': code,
      ...extraHeaders,
    },
    body,
  };
}
