/**
 * The endpoint of routes with mapping rules. The request goes to the backend like a
 * standard route; a 2xx JSON answer (an object or an array of objects) is buffered, every distinct
 * mapping URL is fetched concurrently, and each result is spliced into its items under `tag`.
 * Anything else is relayed unchanged (docs/design-decisions.md "Response mapping").
 *
 * Tracing (docs/design-decisions.md "HTTP behaviour": the same id goes to the backend, the mapping
 * calls and the auth service): every mapping call made carries the request id and, with `telemetry.propagation`,
 * the request's trace with a span id of its own. A call shared through the cache's single-flight
 * (one call for every client request that wants the same URL while it runs) carries the request
 * id and trace of the request that started it; requests that join it or hit the cache make no
 * call and get no span for it.
 *
 * Bounds (README "Response mapping"): at most `limits.connectionsPerOrigin` calls per response and
 * origin in flight at once (limit.ts), at most MAX_MAPPING_CALLS_PER_RESPONSE distinct URLs per
 * response (plan.ts), and an enriched body of at most 2 x `limits.maxMappingBodyBytes`; past a
 * bound, or on any error while enriching, the primary answer is still returned.
 */
import { setMaxListeners } from 'node:events';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { CompiledRoute } from '../config/compile.js';
import type { Exchange, Step } from '../pipeline/step.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import type { Logger } from '../observability/logger.js';
import { appendQuery } from '../upstream/target-url.js';
import {
  UpstreamFramingError,
  downstreamResponseHeaders,
  upstreamRequestHeaders,
} from '../upstream/forward-headers.js';
import { classifyUpstreamError } from '../upstream/upstream-error.js';
import { answerUpstreamFailure } from '../upstream/upstream-failure.js';
import { forwardEndpoint, type ForwardOptions } from '../proxy/forward.js';
import { bufferedLength, upstreamBody } from '../guards/request-buffer.js';
import { scanItems } from './json-scan.js';
import { MAX_MAPPING_CALLS_PER_RESPONSE, planCalls, ruleFieldNames, type PlannedCall } from './plan.js';
import { createLimiter, type Limiter } from './limit.js';
import { spliceItems } from './splice.js';
import { buildItemEdits, tagPrefixBytes, type ItemEdits } from './edits.js';
import { callMapping, type MappingCallObserver } from './mapping-call.js';
import { decodeBody, isJsonContentType, readLimited, utf8Text, type LimitedRead } from './body.js';
import type { MappingCache, MappingOutcome } from './cache.js';

export interface MappingEndpointOptions extends ForwardOptions {
  readonly upstreams: UpstreamRegistry;
  /** `timeouts.mappingSec` in milliseconds, per mapping call. */
  readonly mappingTimeoutMs: number;
  /** `limits.maxMappingBodyBytes`: larger primary bodies are relayed unchanged. */
  readonly maxBodyBytes: number;
  /** The process-wide cache, or undefined when `mappingCache.enabled` is false. */
  readonly cache: MappingCache | undefined;
  /** `telemetry.propagation`: mapping calls carry the request's `traceparent`/`tracestate`. */
  readonly propagateTrace: boolean;
  /** `limits.connectionsPerOrigin`: mapping calls of one response in flight at once, per origin. */
  readonly connectionsPerOrigin: number;
  /** For what is not an event of its own: enrichment given up (limits, errors). */
  readonly logger: Logger;
}

/** Headers that describe the backend's bytes and would lie about the enriched body. */
const STALE_WHEN_CHANGED = [
  'content-length',
  'content-encoding',
  'etag',
  'content-md5',
  'digest',
  'content-digest',
  'repr-digest',
];

/**
 * The client headers never sent with the primary request of a mapped route: the pipeline's set
 * plus `Accept-Encoding`, which the endpoint replaces by `identity` (the body is parsed; a backend
 * that compresses anyway is decoded by body.ts). Made once per route, like sse.ts's.
 */
export function mappingDropSet(dropHeaders: ReadonlySet<string>): ReadonlySet<string> {
  return new Set([...dropHeaders, 'accept-encoding']);
}

/** Builds the mapping endpoint of one route (once, at config load). */
export function mappingEndpoint(route: CompiledRoute, options: MappingEndpointOptions): Step {
  const {
    upstream,
    headersTimeoutMs,
    bodyTimeoutMs,
    events,
    cache,
    mappingTimeoutMs,
    maxBodyBytes,
    propagateTrace,
    logger,
  } = options;
  const { pool, origin } = upstream;
  const dropHeaders = mappingDropSet(options.dropHeaders);
  const rules = route.mapping;
  const fieldNames = ruleFieldNames(rules);
  const ruleUpstreams = rules.map((r) => options.upstreams.forOrigin(r.origin));
  // One concurrency limit per distinct origin and response: `originSlot[rule]` indexes them.
  const originKeys = [...new Set(rules.map((r) => r.origin.key))];
  const originSlot = rules.map((r) => originKeys.indexOf(r.origin.key));
  const maxInFlight = Math.max(1, options.connectionsPerOrigin);
  // Bytes a set tag adds besides its value: `,"tag":` (an upper bound when the key exists).
  const tagBytes = tagPrefixBytes(rules);
  const maxOutputBytes = 2 * maxBodyBytes;
  const method = route.method as Dispatcher.HttpMethod;
  const observer: MappingCallObserver = { events, routeId: route.id };
  // HEAD has no body to enrich: it is a standard forward.
  const forwardHead = forwardEndpoint(route, options);

  /** Sends the primary answer as it came: buffered part first, then whatever is left. */
  async function relay(
    ex: Exchange,
    status: number,
    headers: Record<string, string | string[]>,
    chunks: readonly Buffer[],
    rest: Readable | undefined,
  ): Promise<void> {
    const { res } = ex;
    res.writeHead(status, headers);
    for (const c of chunks) res.write(c);
    if (rest === undefined) {
      res.end();
      return;
    }
    try {
      await pipeline(rest, res);
    } catch (err) {
      // Headers are out: a backend failure mid-body can only cut the response short.
      if (!res.destroyed) res.destroy();
      // The response closing before its end is the client leaving, and so is the abort of the
      // backend body that the client's departure triggers (which Node 22 reports first); any other
      // error is the backend's.
      const kind = classifyUpstreamError(err).kind;
      if (kind === 'aborted' || (err as { code?: unknown } | null)?.code === 'ERR_STREAM_PREMATURE_CLOSE')
        events.emit('client:closed', { requestId: ex.requestId, routeId: route.id, origin: origin.key });
      else
        events.emit('upstream:error', {
          requestId: ex.requestId,
          routeId: route.id,
          origin: origin.key,
          kind,
          error: err,
        });
    }
  }

  /** `clientLeft`: the call was cancelled because the client left (not the backend's failure). */
  function upstreamFailed(ex: Exchange, err: unknown, clientLeft: boolean): void {
    answerUpstreamFailure(ex, err instanceof Error ? err : new Error(String(err)), origin.key, events, clientLeft);
  }

  /**
   * One 'mapping:fail' per rule that failed in this response, never one per item or URL: with a
   * mapping service down, every item of every response fails alike, and the count is what matters.
   */
  function reportFailures(
    ex: Exchange,
    calls: readonly PlannedCall[],
    outcomes: readonly MappingOutcome[],
    failures: ItemEdits['failures'],
    failedItems: ItemEdits['failedItems'],
  ): void {
    const byRule = new Map<number, { url: string; reasons: Map<string, number>; calls: number }>();
    for (const f of failures) {
      const outcome = outcomes[f.callIndex]!;
      const reason = outcome.ok ? '' : outcome.reason;
      let agg = byRule.get(f.rule);
      if (agg === undefined) byRule.set(f.rule, (agg = { url: calls[f.callIndex]!.url, reasons: new Map(), calls: 0 }));
      agg.calls++;
      agg.reasons.set(reason, (agg.reasons.get(reason) ?? 0) + 1);
    }
    for (const [r, agg] of byRule) {
      const [reason = ''] = agg.reasons.keys();
      const reasons = agg.reasons.size > 1 ? Object.fromEntries(agg.reasons) : undefined;
      events.emit('mapping:fail', {
        requestId: ex.requestId,
        routeId: route.id,
        tag: rules[r]!.tag,
        url: agg.url,
        reason,
        items: failedItems[r]!,
        calls: agg.calls,
        reasons,
      });
    }
  }

  /**
   * Fetches every distinct URL concurrently, through the cache when enabled, with at
   * most `connectionsPerOrigin` calls of this response in flight per origin (limit.ts).
   */
  function fetchAll(ex: Exchange, calls: readonly PlannedCall[], signal: AbortSignal): Promise<MappingOutcome[]> {
    const traceOf = propagateTrace ? ex.req : undefined;
    const limiters: (Limiter | undefined)[] = new Array(originKeys.length);
    const limited = (call: PlannedCall, run: () => Promise<MappingOutcome>): Promise<MappingOutcome> => {
      const slot = originSlot[call.rule.index]!;
      return (limiters[slot] ??= createLimiter(maxInFlight)).run(run);
    };
    return Promise.all(
      calls.map((call) => {
        const target = ruleUpstreams[call.rule.index]!;
        if (cache === undefined)
          return limited(call, () =>
            callMapping(target, call.path, {
              requestId: ex.requestId,
              timeoutMs: mappingTimeoutMs,
              maxBytes: maxBodyBytes,
              signal,
              traceOf,
              observer,
            }),
          );
        // A shared call serves other clients too: the one who started it leaving must not cancel
        // it. It runs only on a miss nobody else is fetching, with this request's id and trace;
        // a hit takes no slot.
        return cache.load(call.url, () =>
          limited(call, () =>
            callMapping(target, call.path, {
              requestId: ex.requestId,
              timeoutMs: mappingTimeoutMs,
              maxBytes: maxBodyBytes,
              traceOf,
              observer,
            }),
          ),
        );
      }),
    );
  }

  /** The enriched body, or undefined when the body is to be returned unchanged. */
  async function enrich(
    ex: Exchange,
    raw: Buffer,
    contentEncoding: string | string[] | undefined,
    signal: AbortSignal,
  ): Promise<Buffer | undefined> {
    const decoded = await decodeBody(raw, contentEncoding, maxBodyBytes);
    if (decoded === undefined) return undefined;
    const text = utf8Text(decoded);
    if (text === undefined) return undefined;
    const items = scanItems(text);
    if (items === undefined || items.length === 0) return undefined;
    const plan = planCalls(text, items, rules, fieldNames);
    if (plan.dotSegments > 0) {
      logger.warn(
        { reqId: ex.requestId, route: route.id, skipped: plan.dotSegments },
        'mapping values that are dot-segments (. or ..) skipped; those items go out without the tag',
      );
    }
    if (plan.overLimit > 0) {
      logger.warn(
        { reqId: ex.requestId, route: route.id, limit: MAX_MAPPING_CALLS_PER_RESPONSE, skipped: plan.overLimit },
        'mapping calls over the per-response limit; extra (item, rule) pairs skipped',
      );
    }
    if (plan.calls.length === 0) return undefined;
    const outcomes = await fetchAll(ex, plan.calls, signal);
    if (signal.aborted) return undefined;

    // A tag's JSON (up to maxMappingBodyBytes) is copied into every item that shares its URL:
    // the output is counted before it is built, and is never built past its bound.
    const { edits, addedBytes, failures, failedItems } = buildItemEdits(
      items.length,
      rules,
      plan.callOf,
      outcomes,
      tagBytes,
    );
    // A failed mapping never fails the response: the items go out without the tag.
    if (failures.length > 0) reportFailures(ex, plan.calls, outcomes, failures, failedItems);
    const outputBytes = decoded.length + addedBytes;
    if (outputBytes > maxOutputBytes) {
      logger.warn(
        { reqId: ex.requestId, route: route.id, bytes: outputBytes, limit: maxOutputBytes },
        'mapping output over its limit; primary body returned unchanged',
      );
      return undefined;
    }
    const out = spliceItems(text, items, edits);
    return out === text ? undefined : Buffer.from(out, 'utf8');
  }

  return async (ex) => {
    const { req, res } = ex;
    if (req.method === 'HEAD') return forwardHead(ex);
    const abort = new AbortController();
    // Every uncached mapping call of the response listens to this signal.
    setMaxListeners(0, abort.signal);
    // A client that leaves releases the backend connection and the calls made only for it.
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.once('close', onClose);
    try {
      let answer: Dispatcher.ResponseData;
      const started = performance.now();
      try {
        const headers = upstreamRequestHeaders(
          {
            req,
            requestId: ex.requestId,
            hostHeader: origin.hostHeader,
            claimHeaders: ex.claimHeaders,
            bodyLength: bufferedLength(ex),
          },
          dropHeaders,
        );
        headers.push('accept-encoding', 'identity');
        answer = await pool.request({
          path: appendQuery(route.buildPath(ex.params), route.path, ex.rawQuery),
          method,
          headers,
          body: upstreamBody(ex),
          signal: abort.signal,
          headersTimeout: headersTimeoutMs,
          bodyTimeout: bodyTimeoutMs,
        });
      } catch (err) {
        upstreamFailed(ex, err, abort.signal.aborted);
        return;
      }
      const { statusCode, body } = answer;
      const coding = answer.headers['transfer-encoding'];
      if (coding !== undefined && (typeof coding !== 'string' || coding.trim().toLowerCase() !== 'chunked')) {
        // A framing the gateway does not relay (a transfer coding other than chunked): 502. The
        // abort that follows when the client response closes must not surface as an error.
        body.on('error', () => undefined);
        body.destroy();
        upstreamFailed(ex, new UpstreamFramingError(String(coding)), false);
        return;
      }
      ex.upstreamStatus = statusCode;
      events.emit('upstream:response', {
        routeId: route.id,
        origin: origin.key,
        call: 'backend',
        status: statusCode,
        durationMs: performance.now() - started,
      });
      const headers = downstreamResponseHeaders(answer.headers);
      const declared = Number(answer.headers['content-length'] ?? 0);
      if (
        !isMappableStatus(statusCode) ||
        !isJsonContentType(answer.headers['content-type']) ||
        declared > maxBodyBytes
      ) {
        return await relay(ex, statusCode, headers, [], body);
      }
      let read: LimitedRead;
      try {
        read = await readLimited(body, maxBodyBytes);
      } catch (err) {
        upstreamFailed(ex, err, abort.signal.aborted);
        return;
      }
      if (read.overflow) return await relay(ex, statusCode, headers, read.chunks, body);
      const raw = Buffer.concat(read.chunks, read.size);
      let enriched: Buffer | undefined;
      try {
        enriched = await enrich(ex, raw, answer.headers['content-encoding'], abort.signal);
      } catch (err) {
        // The primary response is always returned, whatever went wrong while enriching.
        logger.error(
          { reqId: ex.requestId, route: route.id, err },
          'mapping failed with an error; primary body returned unchanged',
        );
      }
      if (res.destroyed) return;
      if (enriched === undefined) return await relay(ex, statusCode, headers, [raw], undefined);
      for (const h of STALE_WHEN_CHANGED) delete headers[h];
      headers['content-length'] = String(enriched.length);
      res.writeHead(statusCode, headers);
      res.end(enriched);
    } finally {
      res.off('close', onClose);
    }
  };
}

/** 2xx with a body that can be enriched (not 204/205 without one, not a 206 fragment). */
function isMappableStatus(status: number): boolean {
  return status >= 200 && status < 300 && status !== 204 && status !== 205 && status !== 206;
}
