/**
 * The shaping of a route's JSON answer, on the text: the items are scanned, every distinct mapping
 * URL is fetched (fetch-calls.ts), each result is spliced into its items under `tag`, and the
 * field rules (field-filter.ts) shape the result. Used by mapped routes (enrich.ts) and by
 * aggregated ones on their merged answer (endpoints/aggregate.ts).
 *
 * Bounds (README "Response mapping"): at most `limits.connectionsPerOrigin` calls per response and
 * origin in flight at once (limit.ts), at most MAX_MAPPING_CALLS_PER_RESPONSE distinct URLs per
 * response (plan.ts), and an enriched body of at most 2 x `limits.maxMappingBodyBytes`; past a
 * bound, or on any error while enriching, the primary answer is still returned.
 */
import type { CompiledMappingRule, CompiledRoute, Exchange } from '../pipeline/types.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { scanItemTable } from './json-scan.js';
import type { ItemTable } from './item-table.js';
import {
  MAX_MAPPING_CALLS_PER_RESPONSE,
  planCalls,
  ruleFieldNames,
  type MappingPlan,
  type PlannedCall,
} from './plan.js';
import { spliceItems } from './splice.js';
import { buildItemEdits, tagPrefixBytes, type ItemEdits } from './edits.js';
import type { JsonShapingOptions, MappingOutcome } from './types.js';
import type { CallerSignal } from '../upstream/call/caller-signal.js';
import { createRouteCalls, fetchAll, type RouteCalls } from './fetch-calls.js';

/**
 * A route's JSON text after its mapping rules, then its field rules (`response`); undefined when
 * they change nothing. `size` is the text's length in bytes. Never rejects for a failed mapping.
 */
export type ShapeJson = (ex: Exchange, text: string, size: number, signal: CallerSignal) => Promise<string | undefined>;

/** What enriching one route's answers needs, resolved once at config load. */
interface RouteMapping {
  readonly route: CompiledRoute;
  readonly rules: readonly CompiledMappingRule[];
  readonly fieldNames: ReadonlySet<string>;
  /** Bytes a set tag adds besides its value: `,"tag":` (an upper bound when the key exists). */
  readonly tagBytes: readonly number[];
  readonly maxOutputBytes: number;
  readonly calls: RouteCalls;
  readonly events: EventBus;
  readonly logger: Logger;
}

/** Builds the shaping of one route's JSON answers (once, at config load). */
export function createJsonShaper(route: CompiledRoute, options: JsonShapingOptions): ShapeJson {
  const rules = route.mapping;
  const filter = route.filterResponse;
  const mapping: RouteMapping = {
    route,
    rules,
    fieldNames: ruleFieldNames(rules),
    tagBytes: tagPrefixBytes(rules),
    maxOutputBytes: 2 * options.maxBodyBytes,
    calls: createRouteCalls(route, options),
    events: options.events,
    logger: options.logger,
  };
  return async (ex, text, size, signal) => {
    let out = rules.length > 0 ? await enrich(mapping, ex, text, size, signal) : undefined;
    if (signal.aborted) return undefined;
    if (filter !== undefined) out = filter(out ?? text) ?? out;
    return out === text ? undefined : out;
  };
}

/** The enriched text, or undefined when mapping changes nothing. */
async function enrich(
  m: RouteMapping,
  ex: Exchange,
  text: string,
  size: number,
  signal: CallerSignal,
): Promise<string | undefined> {
  const items = scanItemTable(text);
  if (items === undefined || items.count === 0) return undefined;
  const plan = planCalls(text, items, m.rules, m.fieldNames);
  warnSkipped(m, ex, plan);
  if (plan.calls.length === 0) return undefined;
  const outcomes = await fetchAll(m.calls, ex, plan.calls, signal);
  if (signal.aborted) return undefined;
  return spliceOutcomes(m, ex, text, size, items, plan, outcomes);
}

/** Logs the (item, rule) pairs the plan skipped: those items go out without the tag. */
function warnSkipped(m: RouteMapping, ex: Exchange, plan: MappingPlan): void {
  if (plan.dotSegments > 0) {
    m.logger.warn(
      { reqId: ex.requestId, route: m.route.id, skipped: plan.dotSegments },
      'mapping values that are dot-segments (. or ..) skipped; those items go out without the tag',
    );
  }
  if (plan.overLimit > 0) {
    m.logger.warn(
      { reqId: ex.requestId, route: m.route.id, limit: MAX_MAPPING_CALLS_PER_RESPONSE, skipped: plan.overLimit },
      'mapping calls over the per-response limit; extra (item, rule) pairs skipped',
    );
  }
}

/** The text with each item's tags set from the outcomes, or undefined past the output bound. */
function spliceOutcomes(
  m: RouteMapping,
  ex: Exchange,
  text: string,
  size: number,
  items: ItemTable,
  plan: MappingPlan,
  outcomes: readonly MappingOutcome[],
): string | undefined {
  // A tag's JSON (up to maxMappingBodyBytes) is copied into every item that shares its URL:
  // the output is counted before it is built, and is never built past its bound.
  const { edits, addedBytes, failures, failedItems } = buildItemEdits(
    items.count,
    m.rules,
    plan.callOf,
    outcomes,
    m.tagBytes,
  );
  // A failed mapping never fails the response: the items go out without the tag.
  if (failures.length > 0) reportFailures(m, ex, plan.calls, outcomes, failures, failedItems);
  const outputBytes = size + addedBytes;
  if (outputBytes > m.maxOutputBytes) {
    m.logger.warn(
      { reqId: ex.requestId, route: m.route.id, bytes: outputBytes, limit: m.maxOutputBytes },
      'mapping output over its limit; primary body returned unchanged',
    );
    return undefined;
  }
  return spliceItems(text, items, edits);
}

/**
 * One 'mapping:fail' per rule that failed in this response, never one per item or URL: with a
 * mapping service down, every item of every response fails alike, and the count is what matters.
 */
function reportFailures(
  m: RouteMapping,
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
    m.events.emit('mapping:fail', {
      requestId: ex.requestId,
      routeId: m.route.id,
      tag: m.rules[r]!.tag,
      url: agg.url,
      reason,
      items: failedItems[r]!,
      calls: agg.calls,
      reasons,
    });
  }
}
