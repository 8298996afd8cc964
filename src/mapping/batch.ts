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
import { Scanner, fail, scanItems, scanOrUndefined, stringValue } from './json-scan.js';

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
  const scan = new BatchScan(json, key);
  if (json.charCodeAt(scan.ws(0)) === 0x5b /* [ */) return scanOrUndefined(() => scan.array());
  const items = scanItems(json);
  if (items === undefined) return undefined;
  const out = new Map<string, string>();
  for (const m of items[0]!.members) {
    if (m.kind === 'object') out.set(m.name, json.slice(m.valueStart, m.valueEnd));
  }
  return out;
}

/**
 * The objects of an array answer by their `key` member, in one pass: no member is recorded but
 * the key's, which is compared in place (the answer holds `max` objects, each with a few members).
 */
class BatchScan extends Scanner {
  constructor(
    text: string,
    private readonly key: string,
  ) {
    super(text);
  }

  array(): Map<string, string> {
    const t = this.text;
    const out = new Map<string, string>();
    let p = this.ws(this.ws(0) + 1);
    if (t.charCodeAt(p) === 0x5d /* ] */) p++;
    else {
      for (;;) {
        if (t.charCodeAt(p) !== 0x7b /* { */) fail();
        p = this.elementAfter(this.item(p, out));
        if (p < 0) {
          p = this.listEnd;
          break;
        }
      }
    }
    if (this.ws(p) !== t.length) fail();
    return out;
  }

  /** The object at `start`, kept under its key's value when it has one; the offset after it. */
  private item(start: number, out: Map<string, string>): number {
    const t = this.text;
    const key = this.key;
    let p = this.ws(start + 1);
    // The last `key` member wins, as with JSON.parse.
    let valueStart = -1;
    let valueEnd = -1;
    if (t.charCodeAt(p) === 0x7d /* } */) return p + 1;
    for (;;) {
      const keyStart = p;
      const at = this.memberHead(p);
      const keyEnd = this.keyEnd;
      const escaped = this.keyEscaped;
      p = this.skipValue(at);
      const length = keyEnd - keyStart - 2;
      const plain = !escaped && length === key.length && t.startsWith(key, keyStart + 1);
      if (plain || (escaped && length > key.length && stringValue(t, keyStart, keyEnd) === key)) {
        valueStart = at;
        valueEnd = p;
      }
      p = this.ws(p);
      const d = t.charCodeAt(p);
      if (d === 0x2c /* , */) p = this.ws(p + 1);
      else if (d === 0x7d /* } */) break;
      else fail();
    }
    if (valueStart >= 0) {
      const c = t.charCodeAt(valueStart);
      // A string as unescaped, a number or a boolean as written; null, objects and arrays name nothing.
      const value =
        c === 0x22 /* " */
          ? stringValue(t, valueStart, valueEnd)
          : c === 0x6e /* n */ || c === 0x7b /* { */ || c === 0x5b /* [ */
            ? undefined
            : t.slice(valueStart, valueEnd);
      if (value !== undefined) out.set(value, t.slice(start, p + 1));
    }
    return p + 1;
  }
}
