/**
 * Enrichment of N items by M rules with every mapping call a cache hit: the pure pipeline of
 * src/mapping/shape-json.ts without I/O (scanItemTable -> planCalls -> cache lookups -> buildItemEdits ->
 * spliceItems). This is the gateway's CPU cost per mapped response once the cache is warm; the
 * `Promise.all` over the outcomes and the body read/write are left out.
 * Standalone: `node --import tsx bench/micro/enrich.ts`.
 */
import type { CompiledMappingRule } from '../../src/pipeline/types.js';
import { createMappingCache } from '../../src/mapping/cache.js';
import { type MappingCache, type MappingOutcome } from '../../src/mapping/types.js';
import { scanItemTable } from '../../src/mapping/json-scan.js';
import { planCalls, ruleFieldNames } from '../../src/mapping/plan.js';
import { spliceItems } from '../../src/mapping/splice.js';
import { buildItemEdits, tagPrefixBytes } from '../../src/mapping/edits.js';
import { compile } from './fixtures.js';
import { isMain, measure, runStandalone, type MicroResult, type MicroSuite } from './measure.js';

const FIELDS = ['authorId', 'groupId', 'storeId', 'tagId', 'regionId'];

/** The compiled rules of a route with `m` rules, rule r reading item field FIELDS[r]. */
function rulesOf(m: number): readonly CompiledMappingRule[] {
  const lines = [
    'routes:',
    '  - method: GET',
    '    route: /posts',
    '    service: 127.0.0.1:9',
    '    path: /posts',
    '    public: true',
    '    mapping:',
  ];
  for (let r = 0; r < m; r++) {
    const path = r % 2 === 0 ? `/things${r}/{${FIELDS[r]}}` : `/things${r}?id={${FIELDS[r]}}`;
    lines.push(
      `      - path: "${path}"`,
      `        service: 127.0.0.1:${9000 + r}`,
      `        tag: tag${r}`,
      `        removeKeyMapping: ${r === 0}`,
    );
  }
  return compile(lines.join('\n') + '\n').routes[0]!.mapping;
}

/** A primary body of `n` items, each rule field taking `distinct` values. */
function body(n: number, distinct: number): string {
  return JSON.stringify(
    Array.from({ length: n }, (_, i) => {
      const item: Record<string, unknown> = { id: i, title: `Post ${i}`, views: 1000 + i };
      FIELDS.forEach((f, r) => (item[f] = (i * (2 * r + 1)) % distinct));
      return item;
    }),
  );
}

/** The CPU work of one enrichment, every call answered from the cache. */
function enrichOnce(
  text: string,
  rules: readonly CompiledMappingRule[],
  fieldNames: ReadonlySet<string>,
  cache: MappingCache,
): string {
  const items = scanItemTable(text)!;
  const plan = planCalls(text, items, rules, fieldNames);
  const outcomes = plan.calls.map((c) => cache.load(c.url, miss) as MappingOutcome);
  const { edits } = buildItemEdits(items.count, rules, plan.callOf, outcomes, tagPrefixBytes(rules));
  return spliceItems(text, items, edits);
}

const miss = (): Promise<MappingOutcome> => Promise.reject(new Error('the micro bench expects cache hits only'));

/** One case: builds the body and rules, fills the cache, checks the output, then measures. */
async function enrichCase(n: number, m: number, distinct: number, budget: number): Promise<MicroResult> {
  const rules = rulesOf(m);
  const fieldNames = ruleFieldNames(rules);
  const text = body(n, distinct);
  const cache = createMappingCache({ enabled: true, ttlSec: 3600, maxSize: 10_000, store: 'local' });
  const items = scanItemTable(text)!;
  const plan = planCalls(text, items, rules, fieldNames);
  for (const c of plan.calls)
    await cache.load(c.url, async () => ({
      ok: true,
      json: JSON.stringify({ id: c.path, name: `name of ${c.path}`, email: 'x@example.test' }),
    }));
  const out = JSON.parse(enrichOnce(text, rules, fieldNames, cache)) as Record<string, unknown>[];
  if (out.length !== n || !out.every((item) => rules.every((r) => item[r.tag] !== undefined)))
    throw new Error(`${n}x${m}: not every item was enriched`);
  const stats = cache.stats();
  const result = measure(
    `${n} items x ${m} rules, ${distinct} distinct values (${plan.calls.length} calls, ${(text.length / 1024).toFixed(1)} KiB)`,
    () => enrichOnce(text, rules, fieldNames, cache),
    budget,
  );
  if (cache.stats().misses !== stats.misses) throw new Error('a measured enrichment missed the cache');
  return result;
}

export const suite: MicroSuite = {
  title: 'enrichment, cache hit (scan + plan + cache lookups + splice)',
  async run(budget) {
    const text = body(100, 10);
    const rules = rulesOf(2);
    const fieldNames = ruleFieldNames(rules);
    const items = scanItemTable(text)!;
    return [
      await enrichCase(10, 1, 10, budget),
      await enrichCase(100, 2, 10, budget),
      await enrichCase(1000, 3, 50, budget),
      measure('  of which scanItemTable alone (100 items)', () => scanItemTable(text), budget / 2),
      measure(
        '  of which planCalls alone (100 items x 2 rules)',
        () => planCalls(text, items, rules, fieldNames),
        budget / 2,
      ),
    ];
  },
};

if (isMain(import.meta.url)) await runStandalone(suite);
