import type { ErrorCode } from '../response/errors.js';
import type { UpstreamFailureKind } from './types.js';

export type { UpstreamFailureKind };

/** Classifies an undici/socket error: what happened, and what the client is answered. */
export function classifyUpstreamError(err: unknown): { kind: UpstreamFailureKind; code: ErrorCode } {
  const code = (err as { code?: string } | null)?.code;
  // An AbortSignal's abort (the client left, so the call was cancelled) rejects with a DOMException
  // named AbortError, whose `code` is a number: it is an abort, not an unknown failure.
  if ((err as { name?: unknown } | null)?.name === 'AbortError')
    return { kind: 'aborted', code: 'GW_UPSTREAM_UNREACHABLE' };
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'ETIMEDOUT':
      return { kind: 'timeout', code: 'GW_UPSTREAM_TIMEOUT' };
    // The host name does not resolve (now, or at all): a name or DNS problem, not a backend refusing.
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NODATA':
    case 'EAI_NONAME':
      return { kind: 'dns', code: 'GW_UPSTREAM_UNREACHABLE' };
    case 'ECONNREFUSED':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return { kind: 'refused', code: 'GW_UPSTREAM_UNREACHABLE' };
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return { kind: 'reset', code: 'GW_UPSTREAM_UNREACHABLE' };
    case 'UND_ERR_ABORTED':
    case 'ABORT_ERR':
      return { kind: 'aborted', code: 'GW_UPSTREAM_UNREACHABLE' };
    default:
      return { kind: 'other', code: 'GW_UPSTREAM_UNREACHABLE' };
  }
}
