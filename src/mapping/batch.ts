/**
 * Batched mapping (`batch:` on a mapping rule, docs/mapping.md "Batched mapping"): the distinct
 * values of a response go out in calls of at most `max` values to one batch endpoint instead of
 * one call each, and each object of the answer is matched back to its value by `key`.
 *
 * - The batch path holds `{values}`: each value percent-encoded, joined by `separator` (sent as
 *   written). A batch whose path would pass MAX_BATCH_PATH_BYTES is split further.
 * - Accepted answers: an array of objects that carry the value in their `key` field, or an object
 *   whose member names are the values. A value the answer does not hold leaves its items untagged.
 * - The cache stays per value: each matched object is the entry of the rule's own per-value URL.
 */
import type { BatchRule } from '../config/types.js';
import type { CompiledBatch } from '../pipeline/types.js';
import { encodeValue } from '../upstream/target-url.js';
import { scanItems } from './json-scan.js';
import { placeholderValue } from './plan.js';

/**
 * Longest batch path sent: URLs past 8 KiB are refused by common servers (nginx's default header
 * buffer is 8 KiB for the whole request line), so batches stay well under it.
 */
export const MAX_BATCH_PATH_BYTES = 4096;

/** One batch call: its path and the values it asks for. */
export interface BatchCall {
  readonly path: string;
  readonly values: readonly string[];
}

/** Compiles a rule's `batch` once per configuration (validation checked the one `{values}`). */
export function compileBatch(batch: BatchRule): CompiledBatch {
  const at = batch.path.indexOf('{values}');
  if (at < 0) throw new Error('unvalidated batch path: no {values}');
  return {
    prefix: batch.path.slice(0, at),
    suffix: batch.path.slice(at + '{values}'.length),
    separator: batch.separator,
    key: batch.key,
    max: batch.max,
  };
}

/**
 * The calls that ask for `values`: in order, at most `max` values each, and each path at most
 * `maxPathBytes` long (a single value longer than that still gets a call of its own).
 * @example batchCalls(compileBatch({ path: '/u?ids={values}', separator: ',', key: 'id', max: 2 }), ['a', 'b', 'c'])
 * // [{ path: '/u?ids=a,b', values: ['a', 'b'] }, { path: '/u?ids=c', values: ['c'] }]
 */
export function batchCalls(
  batch: CompiledBatch,
  values: readonly string[],
  maxPathBytes = MAX_BATCH_PATH_BYTES,
): BatchCall[] {
  const calls: BatchCall[] = [];
  const fixed = batch.prefix.length + batch.suffix.length;
  let chunk: string[] = [];
  let encoded: string[] = [];
  let length = fixed;
  const flush = () => {
    if (chunk.length === 0) return;
    calls.push({ path: batch.prefix + encoded.join(batch.separator) + batch.suffix, values: chunk });
    chunk = [];
    encoded = [];
    length = fixed;
  };
  for (const value of values) {
    const e = encodeValue(value);
    const added = e.length + (chunk.length > 0 ? batch.separator.length : 0);
    if (chunk.length >= batch.max || (chunk.length > 0 && length + added > maxPathBytes)) flush();
    length += e.length + (chunk.length > 0 ? batch.separator.length : 0);
    chunk.push(value);
    encoded.push(e);
  }
  flush();
  return calls;
}

/**
 * The objects of a batch answer by value: an array's objects by their `key` field (a string as
 * unescaped, a number as written), or an object's members by name. Undefined for any other answer.
 */
export function batchObjects(json: string, key: string): Map<string, string> | undefined {
  const start = json.trimStart()[0];
  const items = scanItems(json);
  if (items === undefined) return undefined;
  const out = new Map<string, string>();
  if (start === '[') {
    for (const item of items) {
      // The last `key` member wins, as with JSON.parse.
      const m = item.members.findLast((member) => member.name === key);
      const value = m === undefined ? undefined : placeholderValue(json, m);
      if (value !== undefined) out.set(value, json.slice(item.start, item.end));
    }
    return out;
  }
  for (const m of items[0]!.members) {
    if (m.kind === 'object') out.set(m.name, json.slice(m.valueStart, m.valueEnd));
  }
  return out;
}
