/**
 * The gateway's errors as gRPC statuses, on gRPC routes (docs/errors.md, "gRPC status"). A gRPC
 * client reads the outcome of a call from `grpc-status` and `grpc-message`, not from the HTTP
 * status, so a gateway error on a gRPC call is an HTTP 200 `application/grpc` answer whose only
 * HEADERS frame ends the stream and carries the status ("Trailers-Only", the gRPC over HTTP/2
 * protocol); `x-portico-error` keeps the gateway's code for operators and scripts.
 *
 * The status of each code is chosen by what the gateway knows of the failure (a 429 is
 * RESOURCE_EXHAUSTED, a 504 DEADLINE_EXCEEDED), not by the HTTP-to-gRPC table of
 * https://github.com/grpc/grpc/blob/master/doc/http-grpc-status-mapping.md, which is the
 * client's fallback for an answer without `grpc-status` and which servers must not use.
 */
import type { ServerResponse } from 'node:http';
import { ERRORS, type ErrorCode } from './errors.js';

/** gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

export type GrpcStatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];

const S = GrpcStatus;

/** The gRPC status of every gateway error: the one place of this mapping. */
export const GRPC_STATUS_OF = {
  GW_ROUTE_NOT_FOUND: S.UNIMPLEMENTED,
  GW_HOST_NOT_FOUND: S.UNIMPLEMENTED,
  GW_MISDIRECTED_REQUEST: S.UNAVAILABLE,
  GW_METHOD_NOT_ALLOWED: S.UNIMPLEMENTED,
  GW_AUTH_MISSING: S.UNAUTHENTICATED,
  GW_AUTH_INVALID: S.UNAUTHENTICATED,
  GW_AUTH_KEY_MISSING: S.UNAUTHENTICATED,
  GW_AUTH_KEY_INVALID: S.UNAUTHENTICATED,
  GW_AUTH_CREDENTIALS_AMBIGUOUS: S.INVALID_ARGUMENT,
  GW_AUTH_UNAVAILABLE: S.UNAVAILABLE,
  GW_AUTH_AMBIGUOUS: S.INVALID_ARGUMENT,
  GW_AUTH_TOKEN_REPEATED: S.INVALID_ARGUMENT,
  GW_AUTH_FORBIDDEN: S.PERMISSION_DENIED,
  GW_RATE_LIMITED: S.RESOURCE_EXHAUSTED,
  GW_QUOTA_EXCEEDED: S.RESOURCE_EXHAUSTED,
  GW_CIRCUIT_OPEN: S.UNAVAILABLE,
  GW_OVERLOADED: S.UNAVAILABLE,
  GW_UPSTREAM_UNREACHABLE: S.UNAVAILABLE,
  GW_UPSTREAM_TIMEOUT: S.DEADLINE_EXCEEDED,
  GW_AGGREGATE_FAILED: S.UNAVAILABLE,
  GW_UPSTREAM_BAD_UPGRADE: S.UNAVAILABLE,
  GW_UPSTREAM_BAD_RESPONSE: S.UNAVAILABLE,
  GW_UPGRADE_REQUIRED: S.FAILED_PRECONDITION,
  GW_ORIGIN_NOT_ALLOWED: S.PERMISSION_DENIED,
  GW_IP_FORBIDDEN: S.PERMISSION_DENIED,
  GW_BODY_TOO_LARGE: S.RESOURCE_EXHAUSTED,
  GW_BODY_SPILL_CLIENT_LIMIT: S.RESOURCE_EXHAUSTED,
  GW_BODY_SPILL_FULL: S.UNAVAILABLE,
  GW_HEADERS_TOO_LARGE: S.RESOURCE_EXHAUSTED,
  GW_CLIENT_TIMEOUT: S.DEADLINE_EXCEEDED,
  GW_BAD_REQUEST: S.INTERNAL,
  GW_BAD_HOST: S.INTERNAL,
  GW_TRANSFER_CODING_UNSUPPORTED: S.INTERNAL,
  GW_HTTP_VERSION_UNSUPPORTED: S.INTERNAL,
  GW_METHOD_UNSUPPORTED: S.UNIMPLEMENTED,
  GW_GRPC_HTTP_VERSION: S.INTERNAL,
  GW_REQUEST_INVALID: S.INVALID_ARGUMENT,
  GW_REQUEST_NOT_JSON: S.INVALID_ARGUMENT,
  GW_PATH_PARAM_INVALID: S.INVALID_ARGUMENT,
  GW_PATH_REST_INVALID: S.INVALID_ARGUMENT,
  GW_CACHE_ONLY_IF_CACHED: S.UNAVAILABLE,
  GW_GATEWAY_DRAINING: S.UNAVAILABLE,
  GW_INTERNAL: S.INTERNAL,
  GW_METRICS_NOT_PUBLIC: S.PERMISSION_DENIED,
  GW_ADMIN_UNAUTHORIZED: S.UNAUTHENTICATED,
  GW_ADMIN_HOST_NOT_ALLOWED: S.PERMISSION_DENIED,
  GW_ADMIN_PURGE_INVALID: S.INVALID_ARGUMENT,
  GW_PLUGIN_FAILED: S.INTERNAL,
  GW_PLUGIN_TIMEOUT: S.DEADLINE_EXCEEDED,
  GW_PLUGIN_RESPONSE_TOO_LARGE: S.INTERNAL,
  GW_PLUGIN_RESPONSE_INVALID: S.INTERNAL,
} as const satisfies Record<ErrorCode, GrpcStatusCode>;

/** Responses whose gateway errors are answered as gRPC statuses (marked per request, on gRPC calls only). */
const grpcAnswers = new WeakSet<object>();

/** From now on, `sendError` answers `res` as a gRPC status (response/send-error.ts). */
export function answerAsGrpc(res: ServerResponse): void {
  grpcAnswers.add(res);
}

/** Whether `res` answers a gRPC call. */
export function answersAsGrpc(res: ServerResponse): boolean {
  return grpcAnswers.has(res);
}

/** Whether a request says it is a gRPC call (`application/grpc`, `application/grpc+proto`...). */
export function isGrpcContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/grpc(?:[+;]|$)/i.test(contentType);
}

/**
 * `grpc-message` is percent-encoded (gRPC over HTTP/2: every byte outside 0x20-0x7E, and `%`),
 * so any text can travel in a header.
 */
export function encodeGrpcMessage(message: string): string {
  return Buffer.from(message, 'utf8')
    .toString('latin1')
    .replace(/[^\x20-\x24\x26-\x7e]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** The status fields of a gateway error on a gRPC call: headers of a Trailers-Only answer, or trailers. */
export function grpcStatusFields(code: ErrorCode, message?: string): Record<string, string> {
  return {
    'grpc-status': String(GRPC_STATUS_OF[code]),
    'grpc-message': encodeGrpcMessage(message ?? ERRORS[code].message),
    'x-portico-error': code,
  };
}

/**
 * The status a gRPC client would read from an HTTP answer without `grpc-status` (the table of
 * http-grpc-status-mapping.md): for an answer the gateway relays without a code of its own, such
 * as the auth service's refusal.
 */
export function grpcStatusOfHttp(status: number): GrpcStatusCode {
  switch (status) {
    case 400:
      return S.INTERNAL;
    case 401:
      return S.UNAUTHENTICATED;
    case 403:
      return S.PERMISSION_DENIED;
    case 404:
      return S.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return S.UNAVAILABLE;
    default:
      return S.UNKNOWN;
  }
}

/**
 * A refusal answered on a gRPC call (the auth layer's): a gateway error by its code, or an answer
 * relayed without one (the auth service's) by its HTTP status; its headers but the body's go along.
 */
export function sendGrpcRefusal(
  res: ServerResponse,
  refusal: { readonly status: number; readonly headers: Record<string, string>; readonly code?: ErrorCode | undefined },
): void {
  const extra: Record<string, string> = {};
  for (const [name, value] of Object.entries(refusal.headers))
    if (!BODY_HEADERS.has(name.toLowerCase())) extra[name] = value;
  if (refusal.code !== undefined) return sendGrpcError(res, refusal.code, extra);
  if (res.destroyed || res.headersSent) return;
  res.statusCode = 200;
  res.setHeader('content-type', 'application/grpc');
  for (const [name, value] of Object.entries(extra)) res.setHeader(name, value);
  res.setHeader('grpc-status', String(grpcStatusOfHttp(refusal.status)));
  res.setHeader('grpc-message', encodeGrpcMessage(`Refused by the authentication service (HTTP ${refusal.status})`));
  res.end();
}

/** Headers that describe a body, which a gRPC status answer has not. */
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'transfer-encoding']);

/**
 * Answers a gateway error on a gRPC call: a Trailers-Only answer (HTTP 200, `application/grpc`,
 * the status in the one HEADERS frame, which ends the stream), or, once the head went out, the
 * status as the trailers that end it. `extraHeaders` (`retry-after`...) go with the status.
 */
export function sendGrpcError(
  res: ServerResponse,
  code: ErrorCode,
  extraHeaders?: Record<string, string | number>,
  message?: string,
): void {
  if (res.destroyed || res.writableEnded) return;
  const fields = grpcStatusFields(code, message);
  if (res.headersSent) {
    res.addTrailers(fields);
    res.end();
    return;
  }
  res.statusCode = 200;
  res.setHeader('content-type', 'application/grpc');
  for (const [name, value] of Object.entries({ ...extraHeaders, ...fields })) res.setHeader(name, value);
  // No writeHead: `end()` writes the head itself, and on HTTP/2 then sends it as one HEADERS frame
  // with END_STREAM (no DATA, no trailers), which is what Trailers-Only is.
  res.end();
}
