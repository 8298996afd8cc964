/**
 * 100,000 consumers (docs/performance.md "A large key store"): writes a consumers file, then
 * measures what the gateway does with it. "load" is a configuration naming the file read,
 * validated and compiled (`loadConfig`, as `portico start` and `check` do) plus the key store
 * built from it (`createPipelineDeps` does that); "reload" is the file changing on its own
 * (setup/consumers-file.ts: read, validate, compile, swap the store); "memory" is the heap the
 * key store and the compiled consumers keep, after a full GC; "lookup" is one key's hash and
 * lookup, hit and miss; "rejected" is a reload of the file with one bad key hash in its last
 * consumer, which the YAML parser that keeps positions reads to locate the problem.
 *
 *   node --expose-gc --import tsx bench/consumers-scale.ts [--consumers 100000] [--keys 2]
 *        [--format json|yaml|both] [--rounds 3]
 *
 * `--format both` (the default) measures the JSON file, then the YAML one, in one process: the
 * memory line of the second includes what the first left behind.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createHash } from 'node:crypto';
import { loadConfig } from '../src/config/load.js';
import { formatProblem } from '../src/config/problems.js';
import { createKeyStore } from '../src/auth/key-store.js';
import { reloadConsumers } from '../src/setup/consumers-file.js';
import { createLogger } from '../src/observability/logger.js';

const { values } = parseArgs({
  options: {
    consumers: { type: 'string', default: '100000' },
    keys: { type: 'string', default: '2' },
    format: { type: 'string', default: 'both' },
    rounds: { type: 'string', default: '3' },
  },
});
const count = Number(values.consumers);
const keysEach = Number(values.keys);
const rounds = Number(values.rounds);
const formats: readonly ('json' | 'yaml')[] =
  values.format === 'both' ? ['json', 'yaml'] : [values.format === 'yaml' ? 'yaml' : 'json'];

const maybeGc = (globalThis as { gc?: () => void }).gc;
if (maybeGc === undefined) throw new Error('run with node --expose-gc');
const gc: () => void = maybeGc;
const keyOf = (i: number, k: number) => `pk_bench_${i}_${k}`;
const hashOf = (key: string) => `sha256:${createHash('sha256').update(key).digest('hex')}`;

function consumersText(format: 'json' | 'yaml'): string {
  const list = Array.from({ length: count }, (_, i) => ({
    id: `consumer-${i}`,
    keys: Array.from({ length: keysEach }, (_, k) => hashOf(keyOf(i, k))),
    claims: { customer: `customer-${i}`, tier: i % 10 === 0 ? 'gold' : 'silver' },
    plan: i % 10 === 0 ? 'gold' : 'free',
  }));
  if (format === 'json') return JSON.stringify({ consumers: list }, null, 1);
  return (
    'consumers:\n' +
    list
      .map(
        (c) =>
          `  - id: ${c.id}\n    keys:\n${c.keys.map((h) => `      - ${h}\n`).join('')}    claims: { customer: ${c.claims.customer}, tier: ${c.claims.tier} }\n    plan: ${c.plan}\n`,
      )
      .join('')
  );
}

const ms = (start: number) => performance.now() - start;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

function measure(dir: string, format: 'json' | 'yaml'): void {
  const file = join(dir, `consumers.${format}`);
  const text = consumersText(format);
  writeFileSync(file, text);
  writeFileSync(
    join(dir, 'gateway.yaml'),
    `routes:\n  - { method: GET, route: /a, service: "localhost:3000", path: /a, protected: true }\nconfig:\n  consumersFile: consumers.${format}\n  auth: { apiKey: { header: X-API-Key } }\n`,
  );
  console.log(`${count} consumers, ${keysEach} keys each, ${format}: ${mb(text.length)} MB file`);

  gc();
  const before = process.memoryUsage();
  let start = performance.now();
  const loaded = loadConfig(join(dir, 'gateway.yaml'));
  if (!loaded.ok) throw new Error(loaded.problems.slice(0, 5).map(formatProblem).join('\n'));
  const store = createKeyStore(loaded.config.consumers);
  const loadMs = ms(start);
  gc();
  const after = process.memoryUsage();
  console.log(`load (check + compile + key store): ${loadMs.toFixed(0)} ms`);
  console.log(
    `memory kept: heap +${mb(after.heapUsed - before.heapUsed)} MB, rss ${mb(after.rss)} MB (peak during load not shown: see /usr/bin/time -v)`,
  );

  const logger = createLogger({ level: 'silent' });
  const reloads: number[] = [];
  for (let r = 0; r < rounds; r++) {
    start = performance.now();
    if (!reloadConsumers(file, store, logger)) throw new Error('reload refused');
    reloads.push(ms(start));
  }
  console.log(
    `reload (file changed): median ${median(reloads).toFixed(0)} ms of ${rounds} (${reloads.map((x) => x.toFixed(0)).join(', ')})`,
  );

  const lookups = 100_000;
  for (const [name, key] of [
    ['hit', (i: number) => keyOf(i % count, 0)],
    ['miss', (i: number) => `pk_unknown_${i}`],
  ] as const) {
    start = performance.now();
    let found = 0;
    for (let i = 0; i < lookups; i++) if (store.find(key(i)) !== undefined) found++;
    console.log(`lookup ${name}: ${((ms(start) * 1e6) / lookups).toFixed(0)} ns each (${found} found)`);
  }
  console.log(`keys in the store: ${store.size}`);

  // One bad hash in the last consumer: the whole file is read again by the YAML parser to locate it.
  const lastHash = hashOf(keyOf(count - 1, 0));
  writeFileSync(file, text.replace(lastHash, lastHash.slice(0, -1)));
  start = performance.now();
  if (reloadConsumers(file, store, logger)) throw new Error('a bad file was accepted');
  console.log(`rejected reload (a bad hash in the last consumer, located): ${ms(start).toFixed(0)} ms`);
  console.log('');
}

const dir = mkdtempSync(join(tmpdir(), 'portico-consumers-bench-'));
try {
  for (const format of formats) measure(dir, format);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
