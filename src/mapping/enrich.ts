/**
 * The endpoint of routes with mapping rules or field rules (`response.allow/deny/rename`). The
 * request goes to the backend like a standard route; a 2xx JSON answer (an object or an array of
 * objects) is buffered, every distinct mapping URL is fetched concurrently, each result is spliced
 * into its items under `tag`, and the field rules shape the result (mapping/field-filter.ts).
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
import type { CompiledMappingRule, CompiledRoute } from '../config/types.js';
import type { Exchange, Step } from '../pipeline/types.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { BackendCall, createRouteCall, type RouteCall } from '../upstream/backend-call.js';
import { forwardEndpoint, type ForwardOptions } from '../proxy/forward.js';
import { scanItems } from './json-scan.js';
import { batchCalls, batchObjects } from './batch.js';
import { MAX_MAPPING_CALLS_PER_RESPONSE, planCalls, ruleFieldNames, type PlannedCall } from './plan.js';
import { createLimiter, type Limiter } from './limit.js';
import { spliceItems } from './splice.js';
import { buildItemEdits, tagPrefixBytes, type ItemEdits } from './edits.js';
import { callJson, type JsonCallObserver, type JsonCallOptions } from '../upstream/json-call.js';
import { decodeBody, isJsonContentType, utf8Text } from './body.js';
import type { MappingCache, MappingOutcome } from './cache.js';
import { answerCompleted } from '../response/answer-completed.js';

/** What shaping a JSON answer needs besides the route (mapping calls, cache, limits). */
export interface JsonShapingOptions {
  readonly events: EventBus;
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

export interface MappingEndpointOptions extends ForwardOptions, JsonShapingOptions {}

/**
 * A route's JSON text after its mapping rules, then its field rules (`response`); undefined when
 * they change nothing. `size` is the text's length in bytes. Never rejects for a failed mapping.
 */
export type ShapeJson = (ex: Exchange, text: string, size: number, signal: AbortSignal) => Promise<string | undefined>;

const NOT_A_BATCH: MappingOutcome = Object.freeze({
  ok: false,
  reason: 'batch answer is neither an array of objects nor an object keyed by value',
});
const NOT_RETURNED: MappingOutcome = Object.freeze({ ok: false, reason: 'not in the batch answer' });

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

/** Builds the shaping of one route's JSON answers (once, at config load). */
export function createJsonShaper(route: CompiledRoute, options: JsonShapingOptions): ShapeJson {
  const { events, cache, mappingTimeoutMs, maxBodyBytes, propagateTrace, logger } = options;
  const rules = route.mapping;
  const filter = route.filterResponse;
  const fieldNames = ruleFieldNames(rules);
  const ruleUpstreams = rules.map((r) => options.upstreams.forOrigin(r.origin));
  // One concurrency limit per distinct origin and response: `originSlot[rule]` indexes them.
  const originKeys = [...new Set(rules.map((r) => r.origin.key))];
  const originSlot = rules.map((r) => originKeys.indexOf(r.origin.key));
  const maxInFlight = Math.max(1, options.connectionsPerOrigin);
  // Bytes a set tag adds besides its value: `,"tag":` (an upper bound when the key exists).
  const tagBytes = tagPrefixBytes(rules);
  const maxOutputBytes = 2 * maxBodyBytes;
  const observer: JsonCallObserver = { events, routeId: route.id };

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
    // A call made for this client alone stops when it leaves; a shared call does not.
    const shared: JsonCallOptions = {
      requestId: ex.requestId,
      timeoutMs: mappingTimeoutMs,
      maxBytes: maxBodyBytes,
      traceOf,
      observer,
      retries: route.retries,
    };
    const own: JsonCallOptions = { ...shared, signal };
    const limiters: (Limiter | undefined)[] = new Array(originKeys.length);
    const limited = (call: PlannedCall, run: () => Promise<MappingOutcome>): Promise<MappingOutcome> => {
      const slot = originSlot[call.rule.index]!;
      return (limiters[slot] ??= createLimiter(maxInFlight)).run(run);
    };
    const outcomes: (MappingOutcome | Promise<MappingOutcome>)[] = new Array(calls.length);
    let batched: Map<CompiledMappingRule, number[]> | undefined;
    calls.forEach((call, i) => {
      if (call.rule.batch !== undefined) {
        batched ??= new Map();
        const indexes = batched.get(call.rule);
        if (indexes === undefined) batched.set(call.rule, [i]);
        else indexes.push(i);
        return;
      }
      const target = ruleUpstreams[call.rule.index]!;
      if (cache === undefined) {
        outcomes[i] = limited(call, () => callJson(target, call.path, own));
        return;
      }
      // A shared call serves other clients too: the one who started it leaving must not cancel
      // it. It runs only on a miss nobody else is fetching, with this request's id and trace;
      // a hit takes no slot.
      outcomes[i] = cache.load(call.url, () => limited(call, () => callJson(target, call.path, shared)));
    });
    if (batched !== undefined)
      for (const [rule, indexes] of batched) {
        const done = fetchBatch(
          rule,
          indexes.map((i) => calls[i]!),
          own,
          limited,
        );
        indexes.forEach((i, k) => (outcomes[i] = done.then((results) => results[k]!)));
      }
    return Promise.all(outcomes);
  }

  /**
   * The outcomes of a batched rule's calls, in order: cached values from the cache, the others
   * asked for in batch calls (mapping/batch.ts), each returned object stored as its value's entry.
   */
  async function fetchBatch(
    rule: CompiledMappingRule,
    wanted: readonly PlannedCall[],
    options: JsonCallOptions,
    limited: (call: PlannedCall, run: () => Promise<MappingOutcome>) => Promise<MappingOutcome>,
  ): Promise<MappingOutcome[]> {
    const batch = rule.batch!;
    const target = ruleUpstreams[rule.index]!;
    const results: MappingOutcome[] = new Array(wanted.length);
    const cached = cache === undefined ? [] : await cache.lookup(wanted.map((c) => c.url));
    // Values to ask for -> the position of their call (planned calls are distinct, so are their values).
    const ask = new Map<string, number>();
    wanted.forEach((call, k) => {
      const json = cached[k];
      if (json !== undefined) results[k] = { ok: true, json };
      else ask.set(call.value, k);
    });
    const settle = (values: readonly string[], outcome: (value: string) => MappingOutcome) => {
      for (const v of values) results[ask.get(v)!] = outcome(v);
    };
    await Promise.all(
      batchCalls(batch, [...ask.keys()]).map(async (b) => {
        // Any call of the rule names its origin's concurrency slot.
        const answer = await limited(wanted[0]!, () => callJson(target, b.path, { ...options, validated: true }));
        if (!answer.ok) return settle(b.values, () => answer);
        const objects = batchObjects(answer.json, batch.key);
        if (objects === undefined) return settle(b.values, () => NOT_A_BATCH);
        settle(b.values, (v) => {
          const json = objects.get(v);
          if (json === undefined) return NOT_RETURNED;
          cache?.store(wanted[ask.get(v)!]!.url, json);
          return { ok: true, json };
        });
      }),
    );
    return results;
  }

  /** The enriched text, or undefined when mapping changes nothing. */
  async function enrich(ex: Exchange, text: string, size: number, signal: AbortSignal): Promise<string | undefined> {
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
    const outputBytes = size + addedBytes;
    if (outputBytes > maxOutputBytes) {
      logger.warn(
        { reqId: ex.requestId, route: route.id, bytes: outputBytes, limit: maxOutputBytes },
        'mapping output over its limit; primary body returned unchanged',
      );
      return undefined;
    }
    return spliceItems(text, items, edits);
  }

  return async (ex, text, size, signal) => {
    let out = rules.length > 0 ? await enrich(ex, text, size, signal) : undefined;
    if (signal.aborted) return undefined;
    if (filter !== undefined) out = filter(out ?? text) ?? out;
    return out === text ? undefined : out;
  };
}

/** Builds the mapping endpoint of one route (once, at config load). */
export function mappingEndpoint(route: CompiledRoute, options: MappingEndpointOptions): Step {
  const { maxBodyBytes, logger } = options;
  // The body is parsed: asked for as the backend stores it (a compressing one is decoded by body.ts).
  const call = createRouteCall(route, { ...options, identityEncoding: true });
  const shape = createJsonShaper(route, options);
  // HEAD has no body to enrich: it is a standard forward.
  const forwardHead = forwardEndpoint(route, options);

  /** The answer's body once shaped, or undefined when it is to be returned unchanged. */
  async function transform(
    ex: Exchange,
    raw: Buffer,
    contentEncoding: string | string[] | undefined,
    signal: AbortSignal,
  ): Promise<Buffer | undefined> {
    const decoded = await decodeBody(raw, contentEncoding, maxBodyBytes);
    if (decoded === undefined) return undefined;
    const text = utf8Text(decoded);
    if (text === undefined) return undefined;
    const out = await shape(ex, text, decoded.length, signal);
    return out === undefined ? undefined : Buffer.from(out, 'utf8');
  }

  /** Answers with the buffered primary body, enriched when its mapping calls allow. */
  async function sendEnriched(
    ex: Exchange,
    status: number,
    headers: Record<string, string | string[]>,
    raw: Buffer,
    signal: AbortSignal,
  ): Promise<void> {
    const { res } = ex;
    let enriched: Buffer | undefined;
    try {
      enriched = await transform(ex, raw, headers['content-encoding'], signal);
    } catch (err) {
      // The primary response is always returned, whatever went wrong while enriching.
      logger.error(
        { reqId: ex.requestId, route: route.id, err },
        'mapping failed with an error; primary body returned unchanged',
      );
    }
    if (res.destroyed) return;
    if (enriched !== undefined) {
      for (const h of STALE_WHEN_CHANGED) delete headers[h];
      headers['content-length'] = String(enriched.length);
    }
    res.writeHead(status, headers);
    res.end(enriched ?? raw);
  }

  const mapped: MappedAnswer = { maxBodyBytes, sendEnriched, logger };
  return (ex) => {
    // HEAD has no body to enrich: it is a standard forward.
    if (ex.req.method === 'HEAD') return forwardHead(ex);
    return new Promise<void>((resolve) => new PrimaryCall(ex, call, resolve, mapped).start());
  };
}

/** What a primary call hands its buffered answer to (made once per route). */
interface MappedAnswer {
  /** `limits.maxMappingBodyBytes`: larger bodies are relayed unchanged. */
  readonly maxBodyBytes: number;
  /** Enriches and answers; `signal` aborts when the client leaves. */
  sendEnriched(
    ex: Exchange,
    status: number,
    headers: Record<string, string | string[]>,
    raw: Buffer,
    signal: AbortSignal,
  ): Promise<void>;
  readonly logger: Logger;
}

/**
 * The primary call of a mapped route: an answer that can be enriched is buffered (up to
 * `maxBodyBytes`) and handed to the enrichment once complete; any other answer, or one that
 * outgrows the bound, is relayed as it comes, what was buffered first.
 */
class PrimaryCall extends BackendCall {
  /** The body so far while it is buffered; undefined while relaying. */
  private buffered: Buffer[] | undefined;
  private size = 0;
  private status = 0;
  private headers: Record<string, string | string[]> = {};
  /** Aborted when the client leaves during enrichment: the mapping calls made only for it stop. */
  private mappings: AbortController | undefined;

  constructor(
    ex: Exchange,
    call: RouteCall,
    resolve: () => void,
    private readonly mapped: MappedAnswer,
  ) {
    super(ex, call, resolve);
  }

  protected onResponse(ex: Exchange, statusCode: number, headers: Record<string, string | string[]>): boolean {
    const declared = Number(headers['content-length'] ?? 0);
    if (
      !isMappableStatus(statusCode) ||
      !isJsonContentType(headers['content-type']) ||
      declared > this.mapped.maxBodyBytes
    ) {
      ex.res.writeHead(statusCode, headers);
      return true;
    }
    this.status = statusCode;
    this.headers = headers;
    this.buffered = [];
    return true;
  }

  protected override onBody(chunk: Buffer): boolean {
    const chunks = this.buffered;
    const ex = this.ex;
    if (chunks === undefined || ex === undefined) return super.onBody(chunk);
    this.size += chunk.length;
    if (this.size <= this.mapped.maxBodyBytes) {
      chunks.push(chunk);
      return true;
    }
    // Too large to enrich: relayed unchanged from here on, the buffered part first.
    this.buffered = undefined;
    ex.res.writeHead(this.status, this.headers);
    for (const c of chunks) ex.res.write(c);
    return super.onBody(chunk);
  }

  override onComplete(): void {
    const chunks = this.buffered;
    const ex = this.ex;
    if (chunks === undefined || ex === undefined) return super.onComplete();
    this.buffered = undefined;
    // The backend call is over: its connection is free before the mapping calls start.
    this.finish();
    const mappings = new AbortController();
    // Every uncached mapping call of the response listens to this signal.
    setMaxListeners(0, mappings.signal);
    this.mappings = mappings;
    const { mapped } = this;
    mapped
      .sendEnriched(ex, this.status, this.headers, Buffer.concat(chunks, this.size), mappings.signal)
      .catch((err: unknown) => {
        mapped.logger.error({ reqId: ex.requestId, route: ex.route.id, err }, 'mapped answer failed');
        if (!ex.res.writableEnded) ex.res.destroy();
      })
      .finally(() => this.settle());
  }

  /** A client that leaves releases the backend connection and the calls made only for it. */
  protected override clientClosed(): void {
    // Called for every closed response: an answered client has nothing left to cancel.
    if (this.ex === undefined || answerCompleted(this.ex.res)) return;
    this.mappings?.abort();
    super.clientClosed();
  }
}

/** 2xx with a body that can be enriched (not 204/205 without one, not a 206 fragment). */
function isMappableStatus(status: number): boolean {
  return status >= 200 && status < 300 && status !== 204 && status !== 205 && status !== 206;
}
