/**
 * Batched mapping on the bodies of bench/composition.ts, in process: the primary answer of 100
 * items over 100 distinct `authorId`s and the batch endpoint's answer of 100 users, through the
 * pure pipeline of src/mapping/shape-json.ts and fetch-calls.ts without I/O (scanItemTable ->
 * planCalls -> batchCalls -> batchObjects -> buildItemEdits -> spliceItems), next to what the
 * hand-written proxy of bench/node-json-shaping.ts does with the same bodies (`JSON.parse` both,
 * match, assign, `JSON.stringify`). The CPU a batched response costs beyond its two calls.
 * Standalone: `node --import tsx bench/micro/batch-shaping.ts`.
 */
import type { CompiledMappingRule } from '../../src/pipeline/types.js';
import type { MappingOutcome } from '../../src/mapping/types.js';
import { scanItemTable } from '../../src/mapping/json-scan.js';
import { planCalls, ruleFieldNames } from '../../src/mapping/plan.js';
import { batchCalls, batchObjects } from '../../src/mapping/batch.js';
import { spliceItems } from '../../src/mapping/splice.js';
import { buildItemEdits, tagPrefixBytes } from '../../src/mapping/edits.js';
import { compile } from './fixtures.js';
import { isMain, measure, runStandalone, type MicroSuite } from './measure.js';

/** The batched route of bench/composition.ts, compiled. */
function batchedRule(): CompiledMappingRule {
  const yaml = `routes:
  - method: GET
    route: /batched
    service: 127.0.0.1:9
    path: /items
    public: true
    mapping:
      - path: "/users/{authorId}"
        service: 127.0.0.1:9
        tag: author
        batch: { path: "/users?ids={values}", key: id, max: 100 }
`;
  return compile(yaml).routes[0]!.mapping[0]!;
}

/** bench/backend.ts's `/items?n=100&distinct=100`. */
export function itemsBody(): string {
  return JSON.stringify(
    Array.from({ length: 100 }, (_, i) => ({
      id: i + 1,
      userId: (i % 5) + 1,
      authorId: i % 100,
      groupId: (i * 7) % 10,
      title: `item ${i + 1}`,
    })),
  );
}

/** bench/backend.ts's `/users?ids=...` for `ids`. */
export function usersBody(ids: readonly string[]): string {
  return JSON.stringify(ids.map((id) => ({ id: Number(id), name: `user ${id}`, email: `user${id}@example.test` })));
}

/** Portico's CPU work for one batched response; `answer` stands for the batch call's answer. */
export function porticoBatched(text: string, rule: CompiledMappingRule, answer: (path: string) => string): string {
  const rules = [rule];
  const items = scanItemTable(text)!;
  const plan = planCalls(text, items, rules, ruleFieldNames(rules));
  const outcomes: MappingOutcome[] = new Array(plan.calls.length);
  for (const b of batchCalls(
    rule.batch!,
    plan.calls.map((c) => c.value),
  )) {
    const objects = batchObjects(answer(b.path), rule.batch!.key)!;
    // Planned calls are distinct, so are their values: the position of a value is its call's.
    for (let k = 0; k < plan.calls.length; k++) {
      const json = objects.get(plan.calls[k]!.value);
      outcomes[k] = json === undefined ? { ok: false, reason: 'not in the batch answer' } : { ok: true, json };
    }
  }
  const { edits } = buildItemEdits(items.count, rules, plan.callOf, outcomes, tagPrefixBytes(rules));
  return spliceItems(text, items, edits);
}

/** The hand-written proxy's work (bench/node-json-shaping.ts `enrichBatched`) on the same bodies. */
export function handBatched(text: string, answer: (path: string) => string): string {
  const items = JSON.parse(text) as Record<string, unknown>[];
  const values = [...new Set(items.map((i) => i.authorId).filter((v) => v !== undefined && v !== null))];
  const users = new Map<string, unknown>();
  for (let k = 0; k < values.length; k += 100) {
    const ids = values
      .slice(k, k + 100)
      .map((v) => encodeURIComponent(String(v)))
      .join(',');
    for (const u of JSON.parse(answer(`/users?ids=${ids}`)) as Record<string, unknown>[]) users.set(String(u.id), u);
  }
  for (const item of items) {
    const user = users.get(String(item.authorId));
    if (user !== undefined) item.author = user;
  }
  return JSON.stringify(items);
}

export const suite: MicroSuite = {
  title: 'JSON shaping: batched mapping, 100 items over 100 values, max 100',
  run(budget) {
    const text = itemsBody();
    const rule = batchedRule();
    // The backend answers every batch path alike: the answer is built once, as received bytes would be.
    const users = usersBody(Array.from({ length: 100 }, (_, i) => String(i)));
    const answer = () => users;
    if (porticoBatched(text, rule, answer) !== handBatched(text, answer)) throw new Error('the two outputs differ');
    return [
      measure('portico batched pipeline', () => porticoBatched(text, rule, answer), budget),
      measure('hand-written: JSON.parse, match, JSON.stringify', () => handBatched(text, answer), budget),
    ];
  },
};

if (isMain(import.meta.url)) await runStandalone(suite);
