/**
 * Spans queued and POSTed in batches, with at most one send in flight: a batch stays in the
 * queue until its send finished (answered, failed or timed out), so the queue's cap bounds
 * everything held. Beyond it new spans are dropped and counted: a slow or silent collector
 * never grows memory or slows requests. close() sends what it can before a hard deadline, then
 * aborts the send in flight and drops (and counts) what is left, so shutdown never waits on a
 * collector. Send errors are logged at most once a minute.
 */
import { Agent, request } from 'undici';
import type { Logger } from './logger.js';
import { redactUrl } from '../config/syntax/redact-url.js';
import { encodeExportRequest, type OtlpResource, type OtlpSpan } from './otlp-encoding.js';

export interface SpanBatcherOptions {
  /** The full traces URL (`.../v1/traces`). */
  readonly url: string;
  readonly resource: OtlpResource;
  readonly logger: Logger;
  readonly maxBatch?: number;
  readonly maxQueue?: number;
  /** Longest close() waits for queued spans to be sent (default 2 s). */
  readonly closeTimeoutMs?: number;
}

export interface SpanBatcher {
  /** Spans never sent: the queue was full, their send failed, or close()'s deadline came. */
  readonly dropped: number;
  /** Spans waiting, including the batch being sent. */
  readonly queued: number;
  enqueue(span: OtlpSpan): void;
  /** Starts sending the oldest batch unless a send is in flight; resolves when that send ends. */
  flushBatch(): Promise<void>;
  /** Sends what is queued now, one batch at a time. */
  flush(): Promise<void>;
  /** Sends what is queued within the close deadline, then releases the connection. */
  close(): Promise<void>;
}

/** A batcher that POSTs to `options.url`. */
export function createSpanBatcher(options: SpanBatcherOptions): SpanBatcher {
  const { url, resource, logger } = options;
  const maxBatch = options.maxBatch ?? 512;
  const maxQueue = options.maxQueue ?? 4096;
  const dispatcher = new Agent({ connections: 2, keepAliveTimeout: 10_000 });
  // The first `sending` spans are the batch in flight; they leave the queue when its send ends.
  let queue: OtlpSpan[] = [];
  let dropped = 0;
  let lastErrorLog = -Infinity;
  let sending: Promise<void> | undefined;
  let closed = false;
  // Aborts the send in flight at close()'s deadline.
  const giveUp = new AbortController();

  const collector: Collector = { url, resource, dispatcher, signal: giveUp.signal };
  // The collector URL may carry credentials from the environment: logged without them.
  const shownUrl = redactUrl(url);

  async function send(spans: OtlpSpan[]): Promise<void> {
    const failure = await postBatch(collector, spans);
    if (failure === undefined || giveUp.signal.aborted) return;
    dropped += spans.length;
    const now = performance.now();
    if (now - lastErrorLog > 60_000) {
      lastErrorLog = now;
      logger.warn({ err: failure.err, url: shownUrl, spans: spans.length }, 'OTLP export failed; spans dropped');
    }
  }

  function flushBatch(): Promise<void> {
    if (sending !== undefined) return sending;
    if (queue.length === 0 || giveUp.signal.aborted) return Promise.resolve();
    const batch = queue.slice(0, maxBatch);
    sending = send(batch).finally(() => {
      sending = undefined;
      // Aborted at close()'s deadline: the batch is dropped and counted with the rest of the queue.
      if (giveUp.signal.aborted) return;
      queue.splice(0, batch.length);
      if (!closed && queue.length >= maxBatch) void flushBatch();
    });
    return sending;
  }

  return {
    get dropped() {
      return dropped;
    },
    get queued() {
      return queue.length;
    },
    enqueue(span) {
      if (queue.length >= maxQueue) {
        dropped++;
        return;
      }
      queue.push(span);
      if (queue.length >= maxBatch) void flushBatch();
    },
    flushBatch,
    async flush() {
      while (queue.length > 0 && !giveUp.signal.aborted) await flushBatch();
    },
    async close() {
      if (closed) return;
      closed = true;
      const deadline = setTimeout(() => giveUp.abort(), options.closeTimeoutMs ?? 2_000);
      while (queue.length > 0 && !giveUp.signal.aborted) await flushBatch();
      clearTimeout(deadline);
      if (queue.length > 0) {
        dropped += queue.length;
        queue = [];
        await dispatcher.destroy();
      } else await dispatcher.close();
    },
  };
}

/** Where a batcher sends, fixed when it is made; `signal` aborts the send in flight. */
interface Collector {
  readonly url: string;
  readonly resource: OtlpResource;
  readonly dispatcher: Agent;
  readonly signal: AbortSignal;
}

/** POSTs one batch; resolves undefined when the collector took it, else with what went wrong. */
async function postBatch(collector: Collector, spans: OtlpSpan[]): Promise<{ readonly err: unknown } | undefined> {
  try {
    const res = await request(collector.url, {
      method: 'POST',
      dispatcher: collector.dispatcher,
      headers: { 'content-type': 'application/json' },
      body: encodeExportRequest(collector.resource, spans),
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
      signal: collector.signal,
    });
    await res.body.dump();
    if (res.statusCode >= 300) throw new Error(`collector answered ${res.statusCode}`);
    return undefined;
  } catch (err) {
    return { err };
  }
}
