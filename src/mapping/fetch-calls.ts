/**
 * The mapping calls of one response: every distinct URL fetched at once, through the cache and its
 * single-flight when enabled, at most `limits.connectionsPerOrigin` in flight per origin and
 * response (limit.ts); a batched rule's values are asked for in batch calls (batch.ts).
 *
 * Tracing (docs/design-decisions.md "HTTP behaviour": the same id goes to the backend, the mapping
 * calls and the auth service): every mapping call made carries the request id and, with `telemetry.propagation`,
 * the request's trace with a span id of its own. A call shared through the cache's single-flight
 * (one call for every client request that wants the same URL while it runs) carries the request
 * id and trace of the request that started it; requests that join it or hit the cache make no
 * call and get no span for it.
 */
import type { CompiledMappingRule, CompiledRoute, Exchange } from '../pipeline/types.js';
import type { Upstream } from '../upstream/types.js';
import { callJson, type JsonCallObserver, type JsonCallOptions } from '../upstream/call/json-call.js';
import { batchCalls, batchObjects } from './batch.js';
import type { PlannedCall } from './plan.js';
import { createLimiter, type Limiter } from './limit.js';
import type { JsonShapingOptions, MappingCache, MappingOutcome } from './types.js';
import type { CallerSignal } from '../upstream/call/caller-signal.js';

/** What one route's mapping calls need, resolved once at config load. */
export interface RouteCalls {
  readonly cache: MappingCache | undefined;
  /** `upstreams[rule.index]`: the upstream of each rule's origin. */
  readonly upstreams: readonly Upstream[];
  /** `originSlot[rule.index]`: which of the response's `origins` concurrency limits the rule takes. */
  readonly originSlot: readonly number[];
  /** Distinct origins of the route's rules: one concurrency limit each per response. */
  readonly origins: number;
  readonly maxInFlight: number;
  readonly propagateTrace: boolean;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly observer: JsonCallObserver;
  readonly retries: number;
}

/** Runs a call once its origin has a free slot in this response. */
type Limited = (call: PlannedCall, run: () => Promise<MappingOutcome>) => Promise<MappingOutcome>;

const NOT_A_BATCH: MappingOutcome = Object.freeze({
  ok: false,
  reason: 'batch answer is neither an array of objects nor an object keyed by value',
});
const NOT_RETURNED: MappingOutcome = Object.freeze({ ok: false, reason: 'not in the batch answer' });

/** Resolves what a route's mapping calls need (once, at config load). */
export function createRouteCalls(route: CompiledRoute, options: JsonShapingOptions): RouteCalls {
  const rules = route.mapping;
  const originKeys = [...new Set(rules.map((r) => r.origin.key))];
  return {
    cache: options.cache,
    upstreams: rules.map((r) => options.upstreams.forOrigin(r.origin)),
    originSlot: rules.map((r) => originKeys.indexOf(r.origin.key)),
    origins: originKeys.length,
    maxInFlight: Math.max(1, options.connectionsPerOrigin),
    propagateTrace: options.propagateTrace,
    timeoutMs: options.mappingTimeoutMs,
    maxBytes: options.maxBodyBytes,
    observer: { events: options.events, routeId: route.id },
    retries: route.retries,
  };
}

/**
 * Fetches every distinct URL concurrently, through the cache when enabled, with at
 * most `connectionsPerOrigin` calls of this response in flight per origin (limit.ts).
 */
export async function fetchAll(
  rc: RouteCalls,
  ex: Exchange,
  calls: readonly PlannedCall[],
  signal: CallerSignal,
): Promise<MappingOutcome[]> {
  const { cache, upstreams, originSlot, maxInFlight } = rc;
  const traceOf = rc.propagateTrace ? ex.req : undefined;
  // A call made for this client alone stops when it leaves; a shared call does not.
  const shared: JsonCallOptions = {
    requestId: ex.requestId,
    timeoutMs: rc.timeoutMs,
    maxBytes: rc.maxBytes,
    traceOf,
    observer: rc.observer,
    retries: rc.retries,
  };
  const own: JsonCallOptions = { ...shared, signal };
  const limiters: (Limiter | undefined)[] = new Array(rc.origins);
  const limited: Limited = (call, run) => {
    const slot = originSlot[call.rule.index]!;
    return (limiters[slot] ??= createLimiter(maxInFlight)).run(run);
  };
  const outcomes: (MappingOutcome | Promise<MappingOutcome>)[] = new Array(calls.length);
  // Whether an outcome is still a promise: a response whose calls are all batched or cached needs
  // no Promise.all over one promise per URL.
  let pending = false;
  let batched: Map<CompiledMappingRule, number[]> | undefined;
  calls.forEach((call, i) => {
    if (call.rule.batch !== undefined) {
      batched ??= new Map();
      const indexes = batched.get(call.rule);
      if (indexes === undefined) batched.set(call.rule, [i]);
      else indexes.push(i);
      return;
    }
    const target = upstreams[call.rule.index]!;
    if (cache === undefined) {
      outcomes[i] = limited(call, () => callJson(target, call.path, own));
      pending = true;
      return;
    }
    // A shared call serves other clients too: the one who started it leaving must not cancel
    // it. It runs only on a miss nobody else is fetching, with this request's id and trace;
    // a hit takes no slot.
    const outcome = cache.load(call.url, () => limited(call, () => callJson(target, call.path, shared)));
    outcomes[i] = outcome;
    if (outcome instanceof Promise) pending = true;
  });
  if (batched !== undefined) {
    // One promise per batched rule, its results put in place when it settles (not one per value).
    const batches: Promise<void>[] = [];
    for (const [rule, indexes] of batched) {
      const wanted = indexes.map((i) => calls[i]!);
      batches.push(
        fetchBatch(rc, rule, wanted, own, limited).then((results) => {
          for (let k = 0; k < indexes.length; k++) outcomes[indexes[k]!] = results[k]!;
        }),
      );
    }
    await Promise.all(batches);
  }
  return pending ? Promise.all(outcomes) : (outcomes as MappingOutcome[]);
}

/**
 * The outcomes of a batched rule's calls, in order: cached values from the cache, the others
 * asked for in batch calls (mapping/batch.ts), each returned object stored as its value's entry.
 */
async function fetchBatch(
  rc: RouteCalls,
  rule: CompiledMappingRule,
  wanted: readonly PlannedCall[],
  options: JsonCallOptions,
  limited: Limited,
): Promise<MappingOutcome[]> {
  const { cache } = rc;
  const batch = rule.batch!;
  const target = rc.upstreams[rule.index]!;
  const results: MappingOutcome[] = new Array(wanted.length);
  const cached = cache === undefined ? undefined : await cache.lookup(wanted.map((c) => c.url));
  // The values to ask for, and (with a cache) the position of each one's call: the batch calls
  // take them in order, so a batch's values are found by position, with no map by value.
  let ask: string[];
  let askAt: number[] | undefined;
  if (cached === undefined) ask = wanted.map((call) => call.value);
  else {
    ask = [];
    askAt = [];
    for (let k = 0; k < wanted.length; k++) {
      const json = cached[k];
      if (json !== undefined) {
        results[k] = { ok: true, json };
      } else {
        ask.push(wanted[k]!.value);
        askAt.push(k);
      }
    }
  }
  let from = 0;
  await Promise.all(
    batchCalls(batch, ask).map(async (b) => {
      const at = from;
      from += b.values.length;
      // `outcome` gets each value and the position of its call in `wanted`.
      const settle = (outcome: (value: string, k: number) => MappingOutcome) => {
        for (let j = 0; j < b.values.length; j++) {
          const k = askAt === undefined ? at + j : askAt[at + j]!;
          results[k] = outcome(b.values[j]!, k);
        }
      };
      // Any call of the rule names its origin's concurrency slot.
      const answer = await limited(wanted[0]!, () => callJson(target, b.path, { ...options, validated: true }));
      if (!answer.ok) return settle(() => answer);
      const objects = batchObjects(answer.json, batch.key);
      if (objects === undefined) return settle(() => NOT_A_BATCH);
      settle((v, k) => {
        const json = objects.get(v);
        if (json === undefined) return NOT_RETURNED;
        cache?.store(wanted[k]!.url, json);
        return { ok: true, json };
      });
    }),
  );
  return results;
}
