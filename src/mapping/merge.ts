/**
 * How the answers of an aggregated route's backends become one JSON object (docs/aggregation.md).
 * Each answer, in the order the backends are written: `target` picks one field, the backend's
 * allow/deny/rename shape it, then it is nested under `group`, or, without a group, its fields are
 * merged at the top level (a later backend's field replaces an earlier one of the same name, in
 * the earlier one's place). An answer merged at the top level must be an object.
 *
 * Like mapping, merging works on the JSON text (mapping/json-scan.ts): every value is copied byte
 * for byte, so numbers past 2^53 and string escapes survive.
 */
import type { CompiledBackend } from '../pipeline/types.js';
import { scanItems, type ObjectSpan } from './json-scan.js';

/** One backend's part of the merged object, or why it has none. */
export type Shaped =
  | { readonly ok: true; readonly fields: Map<string, string> | string }
  | { readonly ok: false; readonly reason: string };

/**
 * Shapes one backend's JSON text: the merged object's members it contributes (name -> value text),
 * or, with a group, the value text nested under it.
 */
export function shapeAnswer(backend: CompiledBackend, json: string): Shaped {
  let text = json;
  if (backend.target !== undefined) {
    const picked = fieldAt(text, backend.target);
    if (picked === undefined) return { ok: false, reason: `no field ${backend.target.join('.')} in the answer` };
    text = picked;
  }
  if (backend.filter !== undefined) text = backend.filter(text) ?? text;
  if (backend.group !== undefined) return { ok: true, fields: text };
  const object = objectSpan(text);
  if (object === undefined) return { ok: false, reason: 'the answer is not a JSON object (give the backend a group)' };
  const fields = new Map<string, string>();
  for (const m of object.members) fields.set(m.name, text.slice(m.valueStart, m.valueEnd));
  return { ok: true, fields };
}

/** The merged object's text from the backends' shaped parts, in backend order (failed ones left out). */
export function mergeAnswers(backends: readonly CompiledBackend[], parts: readonly Shaped[]): string {
  const members = new Map<string, string>();
  parts.forEach((part, i) => {
    if (!part.ok) return;
    const group = backends[i]!.group;
    if (typeof part.fields === 'string') members.set(group!, part.fields);
    else for (const [name, value] of part.fields) members.set(name, value);
  });
  const out: string[] = [];
  for (const [name, value] of members) out.push(`${JSON.stringify(name)}:${value}`);
  return `{${out.join(',')}}`;
}

/** The text of the value at a dot path of an object, or undefined when there is none. */
function fieldAt(text: string, names: readonly string[]): string | undefined {
  let at = text;
  for (const name of names) {
    const object = objectSpan(at);
    const member = object?.members.find((m) => m.name === name);
    if (member === undefined) return undefined;
    at = at.slice(member.valueStart, member.valueEnd);
  }
  return at;
}

/** The span of a text that is one JSON object; undefined for an array or anything else. */
function objectSpan(text: string): ObjectSpan | undefined {
  if (text.trimStart()[0] !== '{') return undefined;
  return scanItems(text)?.[0];
}
