/**
 * Optional span export over OTLP/HTTP with the JSON encoding (`config.telemetry.otlpEndpoint` or
 * the OTEL_EXPORTER_OTLP_* variables, merged by config/otel-env.ts), POSTed with undici: no
 * OpenTelemetry SDK. The gateway loads this module with a dynamic import only when an endpoint
 * is configured, so it costs nothing when off.
 *
 * Spans per sampled request: one SERVER span for the gateway (parent: the client's span, if it
 * sent a `traceparent`) and one CLIENT span per outgoing call, whose id is the one sent to the
 * callee in `traceparent`. Three parts: call-spans.ts times the calls, otlp-encoding.ts writes
 * the spans, span-batcher.ts sends them; this module joins them at each `request:end`.
 */
import type { EventBus, GatewayEvents } from './events.js';
import type { Logger } from './logger.js';
import { tracesUrl } from '../config/otel-env.js';
import type { Tracer } from './trace-context.js';
import { createCallSpans } from './call-spans.js';
import { clientSpan, otlpResource, serverSpan } from './otlp-encoding.js';
import { createSpanBatcher } from './span-batcher.js';

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
  /** The gateway's tracer, whose sampled requests are recorded while the exporter runs. */
  readonly tracer: Tracer;
  /** How often queued spans are sent (default every second; a full batch goes at once). */
  readonly flushIntervalMs?: number;
  /** Spans per export request (default 512). */
  readonly maxBatch?: number;
  /** Spans held at most, the batch in flight included (default 4096); beyond it they are dropped. */
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

export { tracesUrl };

/** Starts recording and exporting spans. */
export function startOtlpExporter(options: OtlpOptions): OtlpExporter {
  const calls = createCallSpans();
  const batcher = createSpanBatcher({
    url: options.url ?? tracesUrl(options.endpoint),
    resource: otlpResource(options.serviceName, options.resourceAttributes),
    logger: options.logger,
    ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }),
    ...(options.maxQueue === undefined ? {} : { maxQueue: options.maxQueue }),
    ...(options.closeTimeoutMs === undefined ? {} : { closeTimeoutMs: options.closeTimeoutMs }),
  });

  const onRequestEnd = (e: GatewayEvents['request:end']) => {
    const trace = e.trace;
    if (trace === undefined || !trace.sampled || trace.spanId === '') return;
    const end = performance.now();
    const children = trace.children ?? [];
    // The event carries a duration, not a start, and earlier listeners (the log line) ran since it
    // was measured: keep the server span over its calls so that a fast request stays well formed.
    let start = end - e.durationMs;
    for (const child of children) if (child.start < start) start = child.start;
    batcher.enqueue(serverSpan(e, trace, start, end));
    calls.done(children);
    for (const child of children) batcher.enqueue(clientSpan(child, trace, end));
  };
  const unsubscribe = options.events.on('request:end', onRequestEnd);
  options.tracer.setRecorder(calls.recorder);

  const timer = setInterval(() => {
    calls.forgetStale();
    void batcher.flushBatch();
  }, options.flushIntervalMs ?? 1_000);
  timer.unref();

  let closed = false;
  return {
    endpoint: options.endpoint,
    identity: options.identity ?? options.endpoint,
    get dropped() {
      return batcher.dropped;
    },
    get queued() {
      return batcher.queued;
    },
    flush: () => batcher.flush(),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      unsubscribe();
      options.tracer.setRecorder(undefined);
      calls.close();
      await batcher.close();
    },
  };
}
