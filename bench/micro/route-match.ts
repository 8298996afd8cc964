/**
 * Route matching: createRouteTable/match (src/router/route-table.ts) on 50 routes, for a static
 * path, a one-parameter path, a two-parameter path, and a miss (404) and a wrong method (405),
 * which take the slower "which methods would fit" branch. Then 1,000 routes: exact routes only
 * (the baseline), and a table mixing exact, parameter, prefix and host routes, 250 of each,
 * matched for each kind (docs/performance.md "Routing cost").
 * Standalone: `node --import tsx bench/micro/route-match.ts`.
 */
import { createRouteTable, type RouteEntry, type RouteTable } from '../../src/router/route-table.js';
import type { PipelineConfig } from '../../src/pipeline/types.js';
import { compile, fiftyRoutesYaml, thousandExactRoutesYaml, thousandMixedRoutesYaml } from './fixtures.js';
import { isMain, measure, runStandalone, type MicroSuite } from './measure.js';

function tableOf(config: PipelineConfig, count: number): RouteTable {
  if (config.routes.length !== count) throw new Error(`expected ${count} routes, got ${config.routes.length}`);
  const noop = async () => {};
  return createRouteTable(config.routes.map((route): RouteEntry => ({ route, run: noop })));
}

function expectMatch(table: RouteTable, method: string, path: string, kind: string, host?: string): void {
  const m = table.match(method, path, host);
  if (m.kind !== kind) throw new Error(`${method} ${host ?? ''}${path}: expected ${kind}, got ${m.kind}`);
}

export const suite: MicroSuite = {
  title: 'route matching (segment tree, 50 routes; 1,000 exact; 1,000 mixed)',
  run(budget) {
    const table = tableOf(compile(fiftyRoutesYaml()), 50);
    expectMatch(table, 'GET', '/api/stores', 'found');
    expectMatch(table, 'GET', '/api/payments/8812', 'found');
    expectMatch(table, 'GET', '/api/reviews/77/history/3', 'found');
    expectMatch(table, 'GET', '/api/nothing/here', 'not-found');
    expectMatch(table, 'DELETE', '/api/users/1', 'method-not-allowed');
    const exact = tableOf(compile(thousandExactRoutesYaml()), 1000);
    expectMatch(exact, 'GET', '/api/r617/items', 'found');
    const mixed = tableOf(compile(thousandMixedRoutesYaml()), 1000);
    const host = 't117.example.com:8080';
    const wild = 'a.w120.example.com';
    expectMatch(mixed, 'GET', '/api/e117/items', 'found', host);
    expectMatch(mixed, 'GET', '/api/p117/items/42', 'found', host);
    expectMatch(mixed, 'GET', '/api/s117/css/site.css', 'found', host);
    expectMatch(mixed, 'GET', '/api/h117/items', 'found', host);
    expectMatch(mixed, 'GET', '/api/h120/items', 'found', wild);
    expectMatch(mixed, 'GET', '/api/h117/items', 'not-found', 'other.example.com');
    return [
      measure('GET static (/api/stores)', () => table.match('GET', '/api/stores', undefined), budget),
      measure('GET 1 param (/api/payments/8812)', () => table.match('GET', '/api/payments/8812', undefined), budget),
      measure(
        'GET 2 params (/api/reviews/77/history/3)',
        () => table.match('GET', '/api/reviews/77/history/3', undefined),
        budget,
      ),
      measure('miss, 404 (/api/nothing/here)', () => table.match('GET', '/api/nothing/here', undefined), budget / 2),
      measure(
        'wrong method, 405 (DELETE /api/users/1)',
        () => table.match('DELETE', '/api/users/1', undefined),
        budget / 2,
      ),
      measure('1,000 exact: GET exact (baseline)', () => exact.match('GET', '/api/r617/items', host), budget),
      measure('1,000 mixed: GET exact', () => mixed.match('GET', '/api/e117/items', host), budget),
      measure('1,000 mixed: GET param', () => mixed.match('GET', '/api/p117/items/42', host), budget),
      measure('1,000 mixed: GET prefix', () => mixed.match('GET', '/api/s117/css/site.css', host), budget),
      measure('1,000 mixed: GET host', () => mixed.match('GET', '/api/h117/items', host), budget),
      measure('1,000 mixed: GET *.host', () => mixed.match('GET', '/api/h120/items', wild), budget),
    ];
  },
};

if (isMain(import.meta.url)) await runStandalone(suite);
