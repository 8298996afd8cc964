/**
 * From (item, rule) pairs to the distinct URLs to fetch: within one response one URL is fetched
 * once, cache or not (100 items over 5 distinct values cause 5 calls), and at most
 * `MAX_MAPPING_CALLS_PER_RESPONSE` distinct URLs per response.
 */
import type { CompiledMappingRule } from '../pipeline/types.js';
import { isDotSegmentValue } from '../upstream/target-url.js';
import { stringValue, type MemberSpan } from './json-scan.js';
import type { ItemTable } from './item-table.js';

/** One distinct mapping call. */
export interface PlannedCall {
  /** `scheme://host:port/path?query`: the cache key and what logs name. */
  readonly url: string;
  /** Path and query sent to the rule's origin. */
  readonly path: string;
  /** The first rule that needs this URL (all rules sharing it share its origin). */
  readonly rule: CompiledMappingRule;
  /** The value of the rule's first placeholder: what a batched rule asks for. */
  readonly value: string;
}

export interface MappingPlan {
  readonly calls: readonly PlannedCall[];
  /** `callOf[item * rules.length + rule]`: index into `calls`, or -1 when the rule is skipped. */
  readonly callOf: Int32Array;
  /** (item, rule) pairs skipped because their URL would have been a call past the limit. */
  readonly overLimit: number;
  /** (item, rule) pairs skipped because a placeholder value is a dot-segment (`..`, `a/../b`). */
  readonly dotSegments: number;
}

/**
 * Distinct mapping URLs fetched for one response (README "Response mapping"): a body of a few
 * MiB can name hundreds of thousands of URLs, and every one is a call, a connection-pool slot
 * and a circuit permit. Pairs needing a URL past the limit are skipped (and logged by shape-json.ts).
 */
export const MAX_MAPPING_CALLS_PER_RESPONSE = 1000;

/** The field names any rule of a route reads; computed once per route at config load. */
export function ruleFieldNames(rules: readonly CompiledMappingRule[]): ReadonlySet<string> {
  return new Set(rules.flatMap((r) => r.path.params));
}

/**
 * Placeholder value of a member (docs/design-decisions.md): strings unescaped, numbers and booleans exactly as
 * written (`1000000` stays `1000000`), anything else (null, object, array) skips the rule.
 */
export function placeholderValue(text: string, m: MemberSpan): string | undefined {
  return valueText(text, m.kind, m.valueStart, m.valueEnd);
}

function valueText(text: string, kind: MemberSpan['kind'], start: number, end: number): string | undefined {
  switch (kind) {
    case 'string':
      return stringValue(text, start, end);
    case 'number':
    case 'true':
    case 'false':
      return text.slice(start, end);
    default:
      return undefined;
  }
}

/**
 * Resolves every rule for every item and dedupes the URLs. Hot path: a URL string is built once
 * per distinct value tuple of a rule; repeated values cost one Map lookup.
 */
export function planCalls(
  text: string,
  items: ItemTable,
  rules: readonly CompiledMappingRule[],
  fieldNames: ReadonlySet<string>,
  maxCalls = MAX_MAPPING_CALLS_PER_RESPONSE,
): MappingPlan {
  let overLimit = 0;
  let dotSegments = 0;
  const callOf = new Int32Array(items.count * rules.length).fill(-1);
  const calls: PlannedCall[] = [];
  // With one rule, distinct values are distinct URLs: no second map by URL.
  const byUrl = rules.length > 1 ? new Map<string, number>() : undefined;
  const byValues = rules.map(() => new Map<string, number>());
  // The fields are few: a member's name is compared with each, not hashed into a map.
  const names = [...fieldNames];
  // Member indexes into `items`, -1 for none.
  const slots = new Int32Array(names.length);
  const found = new SlotView(text, items, names, slots);
  for (let i = 0; i < items.count; i++) {
    // The last occurrence of a duplicated key wins, as with JSON.parse.
    slots.fill(-1);
    let any = false;
    for (let m = items.first(i), last = items.first(i + 1); m < last; m++) {
      const name = items.name(m);
      for (let f = 0; f < names.length; f++) {
        if (names[f] === name) {
          slots[f] = m;
          any = true;
          break;
        }
      }
    }
    if (!any) continue;
    for (let r = 0; r < rules.length; r++) {
      const rule = rules[r]!;
      const key = valuesKey(rule.path.params, found);
      // Every placeholder of the path must resolve, else the rule is skipped silently.
      if (key === undefined) continue;
      let index = byValues[r]!.get(key);
      if (index === undefined) {
        const params = rule.path.params;
        // With one placeholder the key is its value: no record of values until a path is built.
        const values = params.length === 1 ? undefined : valuesOf(params, found);
        if (values === undefined ? isDotSegmentValue(key) : hasDotSegment(values)) {
          dotSegments++;
          continue;
        }
        const value = values === undefined ? key : values[params[0]!]!;
        // A batched rule's per-value URL is only a cache key or a log's: built when first read.
        // With several rules the URL dedupes calls across rules, so it is built now.
        const call =
          rule.batch !== undefined && byUrl === undefined
            ? new BatchedValueCall(rule, value, values)
            : eagerCall(rule, value, values);
        index = byUrl?.get(call.url);
        if (index === undefined) {
          if (calls.length >= maxCalls) {
            overLimit++;
            continue;
          }
          index = calls.length;
          calls.push(call);
          byUrl?.set(call.url, index);
        }
        byValues[r]!.set(key, index);
      }
      callOf[i * rules.length + r] = index;
    }
  }
  return { calls, callOf, overLimit, dotSegments };
}

/** A call whose path and URL are built at once (what a call made per value needs). */
function eagerCall(rule: CompiledMappingRule, value: string, values: Record<string, string> | undefined): PlannedCall {
  const path = rule.buildPath(values ?? oneValue(rule, value));
  return { url: rule.origin.key + path, path, rule, value };
}

/**
 * A value of a batched rule: it is asked for in a batch call (batch.ts), so its own URL serves
 * only as its cache entry's key and in a failure's log, and is built on first read, if ever.
 */
class BatchedValueCall implements PlannedCall {
  private built: string | undefined;

  constructor(
    readonly rule: CompiledMappingRule,
    readonly value: string,
    private readonly values: Record<string, string> | undefined,
  ) {}

  get path(): string {
    return (this.built ??= this.rule.buildPath(this.values ?? oneValue(this.rule, this.value)));
  }

  get url(): string {
    return this.rule.origin.key + this.path;
  }
}

/** The values of a rule with one placeholder, as its path builder takes them. */
function oneValue(rule: CompiledMappingRule, value: string): Record<string, string> {
  // No prototype: a field named `constructor` must not resolve by accident.
  const values = Object.create(null) as Record<string, string>;
  values[rule.path.params[0]!] = value;
  return values;
}

/** The placeholder values of one item's members found for the rules' fields, by field name. */
class SlotView {
  constructor(
    private readonly text: string,
    private readonly items: ItemTable,
    private readonly names: readonly string[],
    private readonly slots: Int32Array,
  ) {}

  /** The field's placeholder value (`placeholderValue`), or undefined when absent or not a scalar. */
  value(name: string): string | undefined {
    const names = this.names;
    for (let f = 0; f < names.length; f++) {
      if (names[f] !== name) continue;
      const m = this.slots[f]!;
      if (m < 0) return undefined;
      const items = this.items;
      return valueText(this.text, items.kind(m), items.valueStart(m), items.valueEnd(m));
    }
    return undefined;
  }
}

/** A value that would climb out of the rule's path once the service decodes it is never sent. */
function hasDotSegment(values: Readonly<Record<string, string>>): boolean {
  for (const k in values) if (isDotSegmentValue(values[k]!)) return true;
  return false;
}

/** A key for the rule's placeholder values (length-prefixed when several), or undefined. */
function valuesKey(params: readonly string[], found: SlotView): string | undefined {
  if (params.length === 1) return found.value(params[0]!);
  let key = '';
  for (let p = 0; p < params.length; p++) {
    const v = found.value(params[p]!);
    if (v === undefined) return undefined;
    key += `${v.length}:${v}`;
  }
  return key;
}

function valuesOf(params: readonly string[], found: SlotView): Record<string, string> {
  // No prototype: a field named `constructor` must not resolve by accident.
  const values = Object.create(null) as Record<string, string>;
  for (const p of params) values[p] = found.value(p)!;
  return values;
}
