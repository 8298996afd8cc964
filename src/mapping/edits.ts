/**
 * From the answers of a response's mapping calls to the edit of each item: which tags it gets,
 * which parameter fields go (docs/design-decisions.md: only when the tag was set), how many bytes that adds,
 * and which (call, rule) pairs failed. Pure: the shaper (shape-json.ts) logs the failures and bounds the bytes.
 */
import type { CompiledMappingRule } from '../pipeline/types.js';
import type { MappingOutcome } from './types.js';
import type { ItemEdit } from './splice.js';
import type { MappingPlan } from './plan.js';

export interface ItemEdits {
  readonly edits: (ItemEdit | undefined)[];
  /** Upper bound of the bytes the edits add (tags and values; removed keys not subtracted). */
  readonly addedBytes: number;
  /** Each failed (call, rule) pair once, however many items share it. */
  readonly failures: readonly { readonly callIndex: number; readonly rule: number }[];
  /** `failedItems[r]`: items left without rule r's tag because its call failed. */
  readonly failedItems: readonly number[];
}

const EMPTY: ReadonlySet<string> = new Set();

/**
 * `callOf[i * rules.length + r]` is the call of item i and rule r (-1: none), as planCalls gives it.
 * `tagBytes[r]` is the size of rule r's `,"tag":` prefix.
 */
export function buildItemEdits(
  itemCount: number,
  rules: readonly CompiledMappingRule[],
  callOf: MappingPlan['callOf'],
  outcomes: readonly MappingOutcome[],
  tagBytes: readonly number[],
): ItemEdits {
  const jsonBytes = outcomes.map((o) => (o.ok ? Buffer.byteLength(o.json) : 0));
  const edits: (ItemEdit | undefined)[] = new Array(itemCount);
  const failures: { callIndex: number; rule: number }[] = [];
  const failed = new Set<number>();
  const failedItems: number[] = new Array<number>(rules.length).fill(0);
  let addedBytes = 0;
  for (let i = 0; i < itemCount; i++) {
    let set: Map<string, string> | undefined;
    let remove: Set<string> | undefined;
    for (let r = 0; r < rules.length; r++) {
      const callIndex = callOf[i * rules.length + r]!;
      if (callIndex < 0) continue;
      const outcome = outcomes[callIndex]!;
      const rule = rules[r]!;
      if (!outcome.ok) {
        failedItems[r]!++;
        const key = callIndex * rules.length + r;
        if (!failed.has(key)) {
          failed.add(key);
          failures.push({ callIndex, rule: r });
        }
        continue;
      }
      (set ??= new Map()).set(rule.tag, outcome.json);
      addedBytes += tagBytes[r]! + jsonBytes[callIndex]!;
      if (rule.removeKeyMapping) for (const p of rule.path.params) (remove ??= new Set()).add(p);
    }
    if (set !== undefined) edits[i] = { set, remove: remove ?? EMPTY };
  }
  return { edits, addedBytes, failures, failedItems };
}

/** The size of each rule's `,"tag":` prefix, computed once per route. */
export function tagPrefixBytes(rules: readonly CompiledMappingRule[]): number[] {
  return rules.map((r) => Buffer.byteLength(JSON.stringify(r.tag)) + 2);
}
