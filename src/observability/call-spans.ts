/**
 * Timing of outgoing calls without help from the call sites: each call's child span id travels
 * in its `traceparent` header, and undici's diagnostics channels (request created, response
 * head, error) report the request carrying it. Matching the two fills in the child span's
 * start, end, method, URL, callee address and status.
 */
import diagnostics from 'node:diagnostics_channel';
import type { ChildSpan, SpanRecorder } from './trace-context.js';
import { originAddress } from './otlp-encoding.js';

/** A call not matched to its request's end after this long is forgotten. */
const PENDING_TTL_MS = 10 * 60_000;

export interface CallSpans {
  /** Given to the tracer: learns each child span as its call is prepared. */
  readonly recorder: SpanRecorder;
  /** The request ended: its calls are no longer matched. */
  done(children: readonly ChildSpan[]): void;
  /** Forgets calls whose request never reported an end (a WebSocket upgrade has none). */
  forgetStale(): void;
  /** Stops listening to undici. */
  close(): void;
}

interface UndiciRequest {
  readonly origin?: unknown;
  readonly method?: unknown;
  readonly path?: unknown;
  readonly headers?: unknown;
}

/** The span id carried in an outgoing request's `traceparent` (flat undici header list). */
function outgoingSpanId(headers: unknown): string | undefined {
  if (!Array.isArray(headers)) return undefined;
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = headers[i] as unknown;
    if (typeof name === 'string' && name.length === 11 && name.toLowerCase() === 'traceparent') {
      const value = headers[i + 1] as unknown;
      return typeof value === 'string' ? value.slice(36, 52) : undefined;
    }
  }
  return undefined;
}

/** Starts matching undici requests to the child spans the recorder learns. */
export function createCallSpans(): CallSpans {
  // Calls waiting for their undici request, by span id; and undici requests to their span.
  const pending = new Map<string, ChildSpan>();
  const byRequest = new WeakMap<object, ChildSpan>();

  const onCreate = (message: unknown) => {
    const req = (message as { request: UndiciRequest }).request;
    const id = outgoingSpanId(req.headers);
    const span = id === undefined ? undefined : pending.get(id);
    if (span === undefined) return;
    span.start = performance.now();
    span.name = `${String(req.method)} ${String(req.origin).replace(/^[a-z]+:\/\//, '')}`;
    span.origin = `${String(req.origin)}${typeof req.path === 'string' ? req.path : ''}`;
    span.method = String(req.method);
    const { address, port } = originAddress(String(req.origin));
    span.address = address;
    span.port = port;
    byRequest.set(req, span);
  };
  const onHeaders = (message: unknown) => {
    const m = message as { request: object; response: { statusCode: number } };
    const span = byRequest.get(m.request);
    if (span === undefined || span.end !== undefined) return;
    span.end = performance.now();
    span.status = m.response.statusCode;
  };
  const onError = (message: unknown) => {
    const m = message as { request: object; error: { code?: string; message?: string } };
    const span = byRequest.get(m.request);
    if (span === undefined || span.end !== undefined) return;
    span.end = performance.now();
    span.error = m.error.code ?? m.error.message ?? 'error';
  };
  diagnostics.subscribe('undici:request:create', onCreate);
  diagnostics.subscribe('undici:request:headers', onHeaders);
  diagnostics.subscribe('undici:request:error', onError);

  return {
    recorder: { childStarted: (span) => void pending.set(span.spanId, span) },
    done(children) {
      for (const child of children) pending.delete(child.spanId);
    },
    forgetStale() {
      const horizon = performance.now() - PENDING_TTL_MS;
      for (const [id, span] of pending) if (span.start < horizon) pending.delete(id);
    },
    close() {
      diagnostics.unsubscribe('undici:request:create', onCreate);
      diagnostics.unsubscribe('undici:request:headers', onHeaders);
      diagnostics.unsubscribe('undici:request:error', onError);
    },
  };
}
