/**
 * The rows of ./route-match.ts for two builds of the router in one process, interleaved round by
 * round (A, B, B, A, ...), so that both see the same load: `ROUTER_BEFORE` is the `src/` of the
 * other build, extracted beside a link to node_modules:
 *
 *   mkdir /tmp/before && git archive <commit> src | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/
 *
 *   ROUTER_BEFORE=/tmp/before/src MICRO_MS=300 ROUNDS=6 node --import tsx bench/micro/route-match-ab.ts
 *
 * Prints each row's median ns/op for both builds and their ratio (after / before).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as after from '../../src/router/route-table.js';
import { lookupRows, type CreateRouteTable } from './fixtures.js';
import { budgetMs, consumeSink, measure } from './measure.js';

const beforeDir = process.env.ROUTER_BEFORE;
if (beforeDir === undefined) throw new Error('set ROUTER_BEFORE to the src/ directory of the build to compare with');
const before = (await import(pathToFileURL(resolve(beforeDir, 'router/route-table.ts')).href)) as {
  createRouteTable: CreateRouteTable;
};

const builds = { before: lookupRows(before.createRouteTable), after: lookupRows(after.createRouteTable) };
const rounds = Number(process.env.ROUNDS ?? 6);
const budget = budgetMs();
const times: Record<'before' | 'after', number[][]> = { before: [], after: [] };
for (let round = 0; round < rounds; round++) {
  const order: ('before' | 'after')[] = round % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
  for (const [row] of builds.before.entries())
    for (const build of order) {
      const [name, fn] = builds[build][row]!;
      (times[build][row] ??= []).push(measure(name, fn, budget).nsPerOp);
    }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const width = Math.max(...builds.before.map(([name]) => name.length));
process.stdout.write(`${'row'.padEnd(width)}  before ns  after ns  after/before  (median of ${rounds} rounds)\n`);
builds.before.forEach(([name], row) => {
  const b = median(times.before[row]!);
  const a = median(times.after[row]!);
  process.stdout.write(
    `${name.padEnd(width)}  ${b.toFixed(1).padStart(9)}  ${a.toFixed(1).padStart(8)}  ${(a / b).toFixed(2).padStart(12)}\n`,
  );
});
if (consumeSink() === Symbol.for('never')) process.stdout.write('\n');
