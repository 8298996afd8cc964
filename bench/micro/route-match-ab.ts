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
import type { RouteEntry, RouteTable } from '../../src/router/route-table.js';
import * as after from '../../src/router/route-table.js';
import { compile, fiftyRoutesYaml, thousandExactRoutesYaml, thousandMixedRoutesYaml } from './fixtures.js';
import { budgetMs, consumeSink, measure } from './measure.js';

type Create = (entries: readonly RouteEntry[]) => RouteTable;

const beforeDir = process.env.ROUTER_BEFORE;
if (beforeDir === undefined) throw new Error('set ROUTER_BEFORE to the src/ directory of the build to compare with');
const before = (await import(pathToFileURL(resolve(beforeDir, 'router/route-table.ts')).href)) as {
  createRouteTable: Create;
};

const noop = async () => {};
const configs = [fiftyRoutesYaml(), thousandExactRoutesYaml(), thousandMixedRoutesYaml()].map(compile);
const host = 't117.example.com:8080';
const wild = 'a.w120.example.com';

/** The rows of one build: the same lookups as route-match.ts. */
function rowsOf(create: Create): [string, () => unknown][] {
  const [fifty, exact, mixed] = configs.map((c) => create(c.routes.map((route): RouteEntry => ({ route, run: noop }))));
  return [
    ['GET static', () => fifty!.match('GET', '/api/stores', undefined)],
    ['GET 1 param', () => fifty!.match('GET', '/api/payments/8812', undefined)],
    ['GET 2 params', () => fifty!.match('GET', '/api/reviews/77/history/3', undefined)],
    ['miss, 404', () => fifty!.match('GET', '/api/nothing/here', undefined)],
    ['wrong method, 405', () => fifty!.match('DELETE', '/api/users/1', undefined)],
    ['1,000 exact: GET exact', () => exact!.match('GET', '/api/r617/items', host)],
    ['1,000 mixed: GET exact', () => mixed!.match('GET', '/api/e117/items', host)],
    ['1,000 mixed: GET param', () => mixed!.match('GET', '/api/p117/items/42', host)],
    ['1,000 mixed: GET prefix', () => mixed!.match('GET', '/api/s117/css/site.css', host)],
    ['1,000 mixed: GET host', () => mixed!.match('GET', '/api/h117/items', host)],
    ['1,000 mixed: GET *.host', () => mixed!.match('GET', '/api/h120/items', wild)],
  ];
}

const builds = { before: rowsOf(before.createRouteTable), after: rowsOf(after.createRouteTable) };
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
