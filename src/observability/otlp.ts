/**
 * Optional span export over OTLP/HTTP with the JSON encoding (`config.telemetry.otlpEndpoint` or
 * the OTEL_EXPORTER_OTLP_* variables, merged by otel-env.ts),
 * POSTed with undici: no OpenTelemetry SDK. The gateway loads this module with a dynamic
 * import only when an endpoint is configured, so it costs nothing when off.
 *
 * Spans per sampled request: one SERVER span for the gateway (parent: the client's span, if it
 * sent a `traceparent`) and one CLIENT span per outgoing call, whose id is the one sent to the
 * callee in `traceparent`. Call timing comes from undici's diagnostics channels (request created,
 * response head, error), matched by that span id, so no call site has to report anything.
 *
 * Design note: spans are queued and sent in batches (every second, or at 512 spans), with at
 * most one send in flight: a batch stays in the queue until its send finished (answered, failed
 * or timed out after 10 s), so the queue's cap (4096 spans) bounds everything the exporter holds.
 * Beyond it new spans are dropped and counted: a slow or silent collector never grows memory or
 * slows requests. close() sends what it can within a hard deadline (2 s), then aborts the send in
 * flight and drops (and counts) what is left, so shutdown never waits on a collector.
 * Export errors are logged at most once a minute.
 */
import diagnostics from 'node:diagnostics_channel';
import { Agent, request } from 'undici';
import type { EventBus, GatewayEvents } from './events.js';
import type { Logger } from './logger.js';
import { tracesUrl } from './otel-env.js';
import { setSpanRecorder, type ChildSpan, type SpanRecorder } from './trace-context.js';

export interface OtlpOptions {
  /** Collector base URL (`http://collector:4318`) or the full `/v1/traces` URL. */
  readonly endpoint: string;
  /** The traces URL used as-is, over `endpoint` (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). */
  readonly url?: string;
  readonly serviceName: string;
  /** Resource attributes besides service.name (OTEL_RESOURCE_ATTRIBUTES). */
  readonly resourceAttributes?: readonly (readonly [string, string])[];
  /** What the caller compares to decide whether a new config needs a new exporter. */
  readonly identity?: string;
  readonly events: EventBus;
  readonly logger: Logger;
  readonly flushIntervalMs?: number;
  readonly maxBatch?: number;
  readonly maxQueue?: number;
  /** Longest close() waits for queued spans to be sent (default 2 s). */
  readonly closeTimeoutMs?: number;
}

export interface OtlpExporter {
  readonly endpoint: string;
  readonly identity: string;
  /** Spans never exported: the queue was full, their send failed, or close()'s deadline came. */
  readonly dropped: number;
  /** Spans waiting, including the batch being sent. */
  readonly queued: number;
  /** Sends what is queued now, one batch at a time. */
  flush(): Promise<void>;
  /** Stops recording, sends what is queued within the close deadline, releases the connection. */
  close(): Promise<void>;
}

type AttributeValue = { stringValue: string } | { intValue: string };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: AttributeValue }[];
  status: { code: number; message?: string };
}

/** A call not matched to its request's end after this long is forgotten. */
const PENDING_TTL_MS = 10 * 60_000;
const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;

/** `performance.now()` milliseconds to OTLP's nanoseconds since the epoch (microsecond precision). */
export function epochNanos(perfMs: number): string {
  return (BigInt(Math.round((performance.timeOrigin + perfMs) * 1000)) * 1000n).toString();
}

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
const int = (key: string, value: number) => ({ key, value: { intValue: String(value) } });

export { tracesUrl };

/** Host and port of an origin (`http://host:port`), the port defaulted by the scheme. */
export function originAddress(origin: string): { address: string; port: number } {
  const https = origin.startsWith('https:');
  const authority = origin.slice(origin.indexOf('//') + 2);
  const colon = authority.lastIndexOf(':');
  // An IPv6 literal's colons sit inside brackets: only a colon after the ']' starts the port.
  if (colon > authority.lastIndexOf(']'))
    return { address: authority.slice(0, colon), port: Number(authority.slice(colon + 1)) };
  return { address: authority, port: https ? 443 : 80 };
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

interface UndiciRequest {
  readonly origin?: unknown;
  readonly method?: unknown;
  readonly path?: unknown;
  readonly headers?: unknown;
}

/** Starts recording and exporting spans. */
export function startOtlpExporter(options: OtlpOptions): OtlpExporter {
  const url = options.url ?? tracesUrl(options.endpoint);
  const maxBatch = options.maxBatch ?? 512;
  const maxQueue = options.maxQueue ?? 4096;
  const dispatcher = new Agent({ connections: 2, keepAliveTimeout: 10_000 });
  const resource = {
    attributes: [
      str('service.name', options.serviceName),
      ...(options.resourceAttributes ?? []).map(([k, v]) => str(k, v)),
      str('telemetry.sdk.name', 'portico'),
    ],
  };
  // The first `sending` spans are the batch in flight; they leave the queue when its send ends.
  let queue: OtlpSpan[] = [];
  let dropped = 0;
  let lastErrorLog = -Infinity;
  let sending: Promise<void> | undefined;
  let closed = false;
  // Aborts the send in flight at close()'s deadline.
  const giveUp = new AbortController();

  // Calls waiting for their undici request, by span id; and undici requests to their span.
  const pending = new Map<string, ChildSpan>();
  const byRequest = new WeakMap<object, ChildSpan>();
  const recorder: SpanRecorder = { childStarted: (span) => void pending.set(span.spanId, span) };

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

  const enqueue = (span: OtlpSpan) => {
    if (queue.length >= maxQueue) {
      dropped++;
      return;
    }
    queue.push(span);
    if (queue.length >= maxBatch) void flush();
  };

  const onRequestEnd = (e: GatewayEvents['request:end']) => {
    const trace = e.trace;
    if (trace === undefined || !trace.sampled || trace.spanId === '') return;
    const end = performance.now();
    // The event carries a duration, not a start, and earlier listeners (the log line) ran since it
    // was measured: keep the server span over its calls so that a fast request stays well formed.
    let start = end - e.durationMs;
    for (const child of trace.children ?? []) if (child.start < start) start = child.start;
    enqueue({
      traceId: trace.traceId,
      spanId: trace.spanId,
      ...(trace.parentId === undefined ? {} : { parentSpanId: trace.parentId }),
      name: e.routeId ?? `${e.method} unmatched`,
      kind: SPAN_KIND_SERVER,
      startTimeUnixNano: epochNanos(start),
      endTimeUnixNano: epochNanos(end),
      attributes: [
        str('http.request.method', e.method),
        ...(e.routeId === undefined ? [] : [str('http.route', e.routeId.slice(e.routeId.indexOf(' ') + 1))]),
        str('url.path', e.path),
        str('url.scheme', 'http'),
        int('http.response.status_code', e.status),
        str('portico.request_id', e.requestId),
        // A failure names its type: the gateway's error code, else the 5xx status itself.
        ...(e.errorCode !== undefined
          ? [str('error.type', e.errorCode)]
          : e.status >= 500
            ? [str('error.type', String(e.status))]
            : []),
      ],
      status: e.status >= 500 ? { code: STATUS_ERROR } : { code: STATUS_UNSET },
    });
    for (const child of trace.children ?? []) {
      pending.delete(child.spanId);
      const failed = child.error !== undefined || (child.status ?? 0) >= 500;
      enqueue({
        traceId: trace.traceId,
        spanId: child.spanId,
        parentSpanId: trace.spanId,
        name: child.name ?? 'call',
        kind: SPAN_KIND_CLIENT,
        startTimeUnixNano: epochNanos(child.start),
        // Still running (a stream): it ends with the request, as far as this span is concerned.
        endTimeUnixNano: epochNanos(child.end ?? end),
        attributes: [
          ...(child.method === undefined ? [] : [str('http.request.method', child.method)]),
          ...(child.origin === undefined ? [] : [str('url.full', child.origin)]),
          ...(child.address === undefined ? [] : [str('server.address', child.address)]),
          ...(child.port === undefined ? [] : [int('server.port', child.port)]),
          ...(child.status === undefined ? [] : [int('http.response.status_code', child.status)]),
          ...(child.error !== undefined
            ? [str('error.type', child.error)]
            : failed
              ? [str('error.type', String(child.status))]
              : []),
        ],
        status: failed
          ? { code: STATUS_ERROR, ...(child.error === undefined ? {} : { message: child.error }) }
          : { code: STATUS_UNSET },
      });
    }
  };
  const unsubscribe = options.events.on('request:end', onRequestEnd);
  setSpanRecorder(recorder);

  async function send(spans: OtlpSpan[]): Promise<void> {
    const body = JSON.stringify({ resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 'portico' }, spans }] }] });
    try {
      const res = await request(url, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json' },
        body,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
        signal: giveUp.signal,
      });
      await res.body.dump();
      if (res.statusCode >= 300) throw new Error(`collector answered ${res.statusCode}`);
    } catch (err) {
      if (giveUp.signal.aborted) return;
      dropped += spans.length;
      const now = performance.now();
      if (now - lastErrorLog > 60_000) {
        lastErrorLog = now;
        options.logger.warn({ err, url, spans: spans.length }, 'OTLP export failed; spans dropped');
      }
    }
  }

  /** Starts sending the oldest batch unless a send is in flight; resolves when that send ends. */
  function flush(): Promise<void> {
    if (sending !== undefined) return sending;
    if (queue.length === 0 || giveUp.signal.aborted) return Promise.resolve();
    const batch = queue.slice(0, maxBatch);
    sending = send(batch).finally(() => {
      sending = undefined;
      // Aborted at close()'s deadline: the batch is dropped and counted with the rest of the queue.
      if (giveUp.signal.aborted) return;
      queue.splice(0, batch.length);
      if (!closed && queue.length >= maxBatch) void flush();
    });
    return sending;
  }

  // Calls whose request never reports an end (WebSocket upgrades have no 'request:end') must not
  // pile up: forget them after a while.
  const forgetPending = () => {
    const horizon = performance.now() - PENDING_TTL_MS;
    for (const [id, span] of pending) if (span.start < horizon) pending.delete(id);
  };
  const timer = setInterval(() => {
    forgetPending();
    void flush();
  }, options.flushIntervalMs ?? 1_000);
  timer.unref();

  return {
    endpoint: options.endpoint,
    identity: options.identity ?? options.endpoint,
    get dropped() {
      return dropped;
    },
    get queued() {
      return queue.length;
    },
    flush: async () => {
      while (queue.length > 0 && !giveUp.signal.aborted) await flush();
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      unsubscribe();
      setSpanRecorder(undefined);
      diagnostics.unsubscribe('undici:request:create', onCreate);
      diagnostics.unsubscribe('undici:request:headers', onHeaders);
      diagnostics.unsubscribe('undici:request:error', onError);
      const deadline = setTimeout(() => giveUp.abort(), options.closeTimeoutMs ?? 2_000);
      while (queue.length > 0 && !giveUp.signal.aborted) await flush();
      clearTimeout(deadline);
      if (queue.length > 0) {
        dropped += queue.length;
        queue = [];
        await dispatcher.destroy();
      } else await dispatcher.close();
    },
  };
}
